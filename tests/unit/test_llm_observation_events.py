"""The trajectory holds what the model was sent as each tool result (issue 5, new-user pass: a
tool_call event keeps only a 300-char summary): one ``agent_observation`` event per ``tool``
message, equal to the text the real ``openai`` client sent to tests/chat_server.py."""

from __future__ import annotations

from chat_server import call, reply

from ani.agents import AgentTask, Budget, create_agent
from ani.campaign.live import event_line
from ani.campaign.metrics import compute_metrics
from ani.protocol import ToolResult, ToolSpec
from ani.trajectory import Trajectory

TASK = AgentTask(task_class="t", variant_id="t-s1", request="Do it.")
LONG = "line of running config\n" * 100  # 2300 characters


class Adapter:
    level = "a1"

    def __init__(self) -> None:
        self.trajectory = Trajectory(level="a1")

    def tools(self):
        obj = {"type": "object", "properties": {"device": {"type": "string"}}}
        return [ToolSpec(name="get_running_config", description="d", input_schema=obj)]

    def call(self, name, arguments):
        res = ToolResult.success(LONG)
        self.trajectory.log_call(name, arguments, res)
        return res


def test_each_tool_result_sent_is_logged_exactly(server):
    server.script = [
        reply(call("get_running_config", {"device": "r1"}, "c1"), call("nope", {}, "c2")),
        reply(call("submit", {"summary": "done"}, "c3"), call("get_running_config", {}, "c4")),
    ]
    agent = create_agent({"kind": "llm", "base_url": server.url, "model": "m", "api_key_env": None,
                          "max_observation_chars": 1000})
    run = agent.run(TASK, Adapter(), Budget())
    assert run.stop_reason == "submitted"
    obs = [e for e in run.trajectory.events if e["event"] == "agent_observation"]
    sent = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert [(o["tool_call_id"], o["text"]) for o in obs[:2]] == [(m["tool_call_id"], m["content"]) for m in sent]
    assert obs[0]["tool"] == "get_running_config" and obs[0]["truncated"] is True
    assert obs[0]["full_chars"] == len(LONG) == 2300
    assert obs[0]["text"] == LONG[:1000] + "\n[... 1300 more characters cut]"
    assert obs[1]["tool"] == "nope" and obs[1]["truncated"] is False and obs[1]["full_chars"] is None
    assert obs[1]["text"].startswith("error: unknown tool 'nope'")
    # the reply that submits: its calls are answered too (what the history holds)
    assert [(o["tool_call_id"], o["text"]) for o in obs[2:]] == [("c3", "submitted"), ("c4", "not run: after submit")]
    # the tool_call event still keeps only a summary; the observation holds the text
    call_ev = [e for e in run.trajectory.events if e["event"] == "tool_call"][0]
    assert len(call_ev["summary"]) < 1000
    # not printed live, and not counted as an action by the process metrics
    assert event_line(obs[0]) is None
    without = [e for e in run.trajectory.events if e["event"] != "agent_observation"]
    assert compute_metrics(run.trajectory.events, "a1", stop_reason="submitted", submitted=True, success=True) == \
        compute_metrics(without, "a1", stop_reason="submitted", submitted=True, success=True)
    assert compute_metrics(run.trajectory.events, "a1", stop_reason="submitted", submitted=True, success=True).actions == 3
