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

import os
import tempfile

#: $1 = the directory, $2 = a side directory from :func:`side_dir` (its ``orig`` gets the
#: original bound to it, its ``stage`` the tmpfs of symlinks, built before it covers the
#: directory, so hiding /usr/bin itself works), $3... = the names to hide
HIDE_SCRIPT = r"""
set -e
dir=$1; side=$2; shift 2
mount --bind "$dir" "$side/orig"
mount -t tmpfs -o mode=0755 ani-hide "$side/stage"
for f in "$side/orig"/* ; do
  b=${f##*/}; keep=1
  for h in "$@"; do [ "$b" = "$h" ] && keep=0; done
  [ $keep = 1 ] && ln -s "$f" "$side/stage/$b"
done
mount --move "$side/stage" "$dir"
"""


def side_dir() -> str:
    """A fresh directory under /tmp with empty ``orig`` and ``stage`` (used inside the namespace
    only; outside they stay empty: remove them with :func:`remove_side` after the command)."""
    d = tempfile.mkdtemp(prefix="ani-hide-")
    for sub in ("orig", "stage"):
        os.mkdir(os.path.join(d, sub))
    return d


def remove_side(side: str) -> None:
    for sub in ("orig", "stage"):
        os.rmdir(os.path.join(side, sub))
    os.rmdir(side)


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
