"""NetConfBench / NetConfArena compatibility (issue 15): the task exchange format of the
NetConfBench draft (``task``: models, load and dump; ``testcases``: both testcase shapes as
observer checks; ``platform``: which platform a task's configs are for), and the ``ani tasks``
command (``cli``). Docs: ``docs/netconfbench.md``."""
