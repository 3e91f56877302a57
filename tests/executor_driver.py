"""A coordinator for the executor interrupt tests: ``python tests/executor_driver.py OUT NAME
OPTIONS_JSON N_PLANS`` runs N plans of :mod:`ani.testing.fake_execute` (each sleeping 120 s)
through the executor NAME and prints one JSON line per sink call (``started``, ``event``,
``finished``), then ``{"interrupted": true}`` and exit 130 when the executor raised
KeyboardInterrupt, or ``{"done": true}``. A Dask executor with a LocalCluster prints its worker PIDs first
(``{"dask_workers": [...]}``)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ani.campaign.executors import get_executor
from ani.campaign.plan import RunPlan, ScenarioRef


class PrintSink:
    def _out(self, **msg: object) -> None:
        print(json.dumps(msg), flush=True)

    def started(self, plan: RunPlan) -> None:
        self._out(started=plan.run_id)

    def event(self, run_id: str, event: dict) -> None:
        self._out(event=run_id, data=event)

    def finished(self, plan: RunPlan, record: object) -> None:
        self._out(finished=plan.run_id, label=getattr(record, "label", None), reason=getattr(record, "infra_error_reason", None))


def main() -> int:
    out, name, options, n = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
    plans = [RunPlan(run_id=f"a1-t-s{i}", campaign="drv", cell="a1", level="a1", task="t", seed=i,
                     scenario=ScenarioRef(), agent={"sleep_s": 120}) for i in range(n)]
    ex = get_executor(name, target="ani.testing.fake_execute:execute", **options)
    try:
        if str(options.get("scheduler", "")).startswith("local:"):
            client = ex.connect()
            print(json.dumps({"dask_workers": list(client.run(os.getpid).values())}), flush=True)
        ex.run(plans, out, PrintSink())
    except KeyboardInterrupt:
        print(json.dumps({"interrupted": True}), flush=True)
        return 130
    finally:
        ex.close()
    print(json.dumps({"done": True}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
