"""A3-R source of truth: desired state per router in a git repository (see docs/sot.md).

- :mod:`ani.sot.format`: the desired-state document of one router (to_doc / from_doc / dumps)
- :mod:`ani.sot.patch`: safe RFC 6902 JSON Patch (atomic, typed errors, JSON-typed ``test``)
- :mod:`ani.sot.repo`: the git-backed store (:class:`SotRepo`)
- :mod:`ani.sot.bounds`: the bounds of what one call can create, the checks of revisions and messages
- :mod:`ani.sot.drift`: desired vs actual on the device model; non-convergence detection
"""
