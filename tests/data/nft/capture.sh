#!/bin/sh
# Re-capture the JSON fixtures of tests/unit/test_firewall.py from the real nft (needs root):
# each NAME.nft is loaded into an empty network namespace and `nft -j list ruleset` saved as
# NAME.json. replace.json: replace.nft, then the script of firewall.replace_script(<full.nft's
# model>) (replace-step.nft) in a second `nft -f`. empty.json: a namespace with no ruleset.
set -e
cd "$(dirname "$0")"
for f in edge full extra nochain; do
  unshare -n sh -c "nft -f $f.nft && nft -j list ruleset" > $f.json
done
unshare -n sh -c "nft -f replace.nft && nft -f replace-step.nft && nft -j list ruleset" > replace.json
unshare -n nft -j list ruleset > empty.json
