"""The Lab: real FRR routers and hosts in Linux network namespaces.

CONTRACT (other modules code against these signatures; keep them):

    lab = Lab(topology, lab_id=None, detached=False)
    lab.up()                -> Lab       # returns when routing has converged; raises ConvergenceTimeout
    lab.down()              -> None      # idempotent; removes only this lab's namespaces, PIDs, files
    with Lab(topology) as lab: ...       # up() on enter, down() on exit (also on exceptions)
    lab.id: str; lab.topology: Topology; lab.dir: Path  (/run/ani/labs/<id>)
    lab.routers / lab.hosts -> list[str]
    lab.netns(node) -> str               # "ani-<id>-<node>"
    lab.pathspace(router) -> str         # FRR -N pathspace (same string as netns)
    lab.exec(node, argv, timeout=10.0, input=None) -> ExecResult
        # runs argv inside the node's netns, under a private UTS namespace whose hostname is
        # the node's name; for routers PATH starts with a dir holding a `vtysh` wrapper bound
        # to the router's pathspace (plain `vtysh` reaches this router's FRR and no other)
    lab.node_argv(node, argv) -> list[str]   # the host-side argv lab.exec() runs (used by
        # scrapli's bin transport and by the A0 sandbox)
    lab.vtysh(router, commands: list[str] | str, timeout=10.0) -> ExecResult   # vtysh -c ... -c ...
    lab.vtysh_json(router, command, timeout=10.0) -> dict | list               # parsed `... json`
    lab.running_config(router) -> str        # `show running-config` text
    lab.wait_converged(timeout_s=None) -> None   # raises ConvergenceTimeout naming what is pending
    Lab.attach(lab_id) -> Lab                # from the state file of a running lab; LabNotFound
    Lab.list_labs() -> list[dict]            # id, name, owner_pid, alive, nodes, created
    Lab.down_stale() -> list[str]            # ids of labs removed because their owner is gone
"""
