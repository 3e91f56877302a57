"""The per-router NETCONF server (RFC 6241 over SSH, RFC 6242): datastores, locks, confirmed
commit, edit-config, subtree filters and get-schema, on top of the device model (``ani.device``)
and its YANG module (``yang/ani-frr.yang``). See ``docs/netconf.md``."""
