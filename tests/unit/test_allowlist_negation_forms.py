"""The allowlist's negations agree with FRR 8.4.4 (no device: the FRR side is
tests/integration/test_allowlist_negations_frr.py).

FRR refuses some negations WITH their arguments ("% Unknown command") and takes a shorter one;
those rules are not negatable in adapters/frr.yaml, name the accepted form in ``negation:``, and
the allowlist refuses the long form saying which negation FRR accepts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ani.adapters.allowlist import Refused, plan_config
from ani.adapters.cli_session import classify
from ani.adapters.platform import load_platform
from ani.errors import ConfigError

P = load_platform("frr")

IF = ["interface eth0"]
RM = ["route-map RM permit 10"]
OSPF = ["router ospf"]

# (block, negation FRR refuses, negation FRR accepts)
SHORTER = [
    (IF, "no description uplink to r2", "no description"),
    (RM, "no description tenants out", "no description"),
    (RM, "no set as-path prepend 64501 64501", "no set as-path prepend"),
    (RM, "no on-match goto 20", "no on-match goto"),
    (OSPF, "no maximum-paths 4", "no maximum-paths"),
]


@pytest.mark.parametrize(("ctx", "rejected", "accepted"), SHORTER)
def test_long_negation_refused_naming_the_accepted_one(ctx, rejected, accepted) -> None:
    with pytest.raises(Refused) as exc:
        plan_config(P, [*ctx, rejected])
    assert exc.value.index == len(ctx)
    assert exc.value.reason == (
        f"FRR refuses this negation with its arguments ('% Unknown command'); "
        f"the negation it accepts is {accepted!r}")
    steps = plan_config(P, [*ctx, accepted])
    assert steps[-1].kind == "cli" and steps[-1].norm == accepted


@pytest.mark.parametrize(("ctx", "rejected", "accepted"), SHORTER)
def test_long_negation_refused_in_a_multi_line_call(ctx, rejected, accepted) -> None:
    """Refused where it stands in a longer call (nothing of the call is sent)."""
    with pytest.raises(Refused) as exc:
        plan_config(P, ["router bgp 64501", "bgp router-id 10.0.0.1", "exit", *ctx, accepted, rejected])
    assert exc.value.index == 3 + len(ctx) + 1
    assert accepted in exc.value.reason


def test_long_negation_outside_its_block_still_names_the_accepted_form() -> None:
    with pytest.raises(Refused) as exc:
        plan_config(P, ["no description hello"])
    assert "'no description'" in exc.value.reason


def test_bgp_maximum_paths_negation_with_argument_stays_allowed() -> None:
    """FRR takes `no maximum-paths 4` under router bgp (it refuses it only under router ospf)."""
    assert plan_config(P, ["router bgp 64501", "address-family ipv4 unicast", "no maximum-paths 4"])[-1].context == "bgp-af4u"
    assert plan_config(P, ["router bgp 64501", "no maximum-paths ibgp 4"])[-1].context == "bgp"
    with pytest.raises(Refused, match="'no maximum-paths'"):
        plan_config(P, ["router bgp 64501", "router ospf", "no maximum-paths 4"])


@pytest.mark.parametrize("line", ["on-match next", "on-match goto 20", "no on-match next", "no on-match goto",
                                  "set as-path prepend 64501 64501", "no set as-path prepend 64501",
                                  "no set as-path prepend", "description x", "no description"])
def test_route_map_forms_allowed(line) -> None:
    assert plan_config(P, [*RM, line])[-1].context == "route-map"


def test_ospf_router_id_negations() -> None:
    """FRR 8.4 refuses a bare `no router-id` under router ospf; `no ospf router-id` and
    `no [ospf] router-id <ip>` are taken."""
    for ok in ["no ospf router-id", "no router-id 10.0.0.1", "no ospf router-id 10.0.0.1"]:
        assert plan_config(P, [*OSPF, ok])[-1].context == "ospf"
    with pytest.raises(Refused, match="not an allowlisted configuration statement"):
        plan_config(P, [*OSPF, "no router-id"])


def test_ospf_distance_negation_with_argument_allowed() -> None:
    assert plan_config(P, [*OSPF, "no distance 100"])[-1].context == "ospf"


def test_reference_bandwidth_notice_is_a_warning() -> None:
    """`no auto-cost reference-bandwidth` is applied (vtysh exit 0) but prints a `%` notice."""
    out = ("% OSPF: Reference bandwidth is changed.\n"
           "        Please ensure reference bandwidth is consistent across all routers")
    assert classify(P, out, False).status == "success"
    assert classify(P, "% OSPF: something else", False).status == "error"


def test_no_rule_is_both_negatable_and_has_a_shorter_negation() -> None:
    for st in P.config:
        assert not (st.d.negatable and st.d.negation), st.d.pattern
        if st.d.negation is not None:
            assert st.refused_neg is not None and st.neg is None


def _platform_with(tmp_path: Path, extra: list[dict]) -> Path:
    data = yaml.safe_load(P.path.read_text())
    data["config"] = [*data["config"], *extra]
    out = tmp_path / f"p{len(list(tmp_path.iterdir()))}.yaml"
    out.write_text(yaml.safe_dump(data))
    return out


def test_schema_negation_and_negatable_together_refused(tmp_path) -> None:
    path = _platform_with(tmp_path, [{"ctx": ["interface"], "pattern": "mtu <int>", "negatable": True,
                                      "negation": "no mtu"}])
    with pytest.raises(ConfigError, match="negation"):
        load_platform(path)


def test_schema_negation_must_be_allowed_by_a_rule(tmp_path) -> None:
    path = _platform_with(tmp_path, [{"ctx": ["interface"], "pattern": "mtu <int>", "negation": "no mtu"}])
    with pytest.raises(ConfigError, match="no rule allows it"):
        load_platform(path)
    ok = _platform_with(tmp_path, [{"ctx": ["interface"], "pattern": "mtu <int>", "negation": "no mtu"},
                                   {"ctx": ["interface"], "pattern": "no mtu"}])
    p = load_platform(ok)
    with pytest.raises(Refused, match="'no mtu'"):
        plan_config(p, ["interface eth0", "no mtu 1500"])
    assert plan_config(p, ["interface eth0", "no mtu"])[-1].norm == "no mtu"
