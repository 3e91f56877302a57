"""Hide installed files from one command, for real, without uninstalling anything (the machine is
shared: never apt-get remove): the command runs in a private mount namespace in which a
directory (``/usr/lib/frr``) is replaced by a tmpfs of symlinks to everything in it but the
hidden names. Nothing changes outside that namespace (``unshare -m``: private propagation), and
``ip netns exec`` (every lab command) inherits the caller's mount namespace, so the lab, its
NETCONF server and the daemons it starts see the directory as the command does.

    hidden(["ani", "doctor"], "/usr/lib/frr", ["frr-reload.py"]) -> argv to run
    HIDE_SCRIPT: the sh script; ``sh -c HIDE_SCRIPT hide DIR SIDE NAME...`` hides in the
        current mount namespace (for a process already in a private one, e.g. mid-run)

Importable from any test module (``tests/`` is on ``sys.path`` through the rootdir conftest).
"""

from __future__ import annotations

import tempfile

#: $1 = the directory, $2 = an empty side directory (the original is bound there), $3... = names
HIDE_SCRIPT = r"""
set -e
dir=$1; side=$2; shift 2
mount --bind "$dir" "$side"
mount -t tmpfs -o mode=0755 ani-hide "$dir"
for f in "$side"/* ; do
  b=${f##*/}; keep=1
  for h in "$@"; do [ "$b" = "$h" ] && keep=0; done
  [ $keep = 1 ] && ln -s "$f" "$dir/$b"
done
"""


def side_dir() -> str:
    """A fresh empty directory under /tmp for the original to be bound to (inside the namespace
    only; outside it stays empty: remove it after the command)."""
    return tempfile.mkdtemp(prefix="ani-hide-")


def hidden(argv: list[str], directory: str, names: list[str], side: str) -> list[str]:
    """argv running ``argv`` in a private mount namespace where ``names`` of ``directory`` do not
    exist (everything else in it does). ``side``: from :func:`side_dir`."""
    wrapper = (
        'dir=$1; side=$2; shift 2; names=""\n'
        'while [ "$1" != "--" ]; do names="$names $1"; shift; done; shift\n'
        f'sh -c {_quote(HIDE_SCRIPT)} hide "$dir" "$side" $names\n'
        'exec "$@"\n'
    )
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", wrapper, "hidden",
            directory, side, *names, "--", *argv]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"
