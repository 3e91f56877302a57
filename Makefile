# The two commands of the README. Both do all the set-up first (idempotent).
SHELL := /bin/bash
VENV  := .venv
ANI   := $(VENV)/bin/ani

.PHONY: setup demo test clean-labs

setup:
	@bash scripts/setup.sh $(firstword $(MAKECMDGOALS) setup)

demo: setup
	@$(ANI) lab down --stale >/dev/null
	@$(ANI) campaign run campaigns/level-sweep.yaml

test: setup
	@$(ANI) lab down --stale >/dev/null
	@$(VENV)/bin/python -m pytest

clean-labs: setup
	@$(ANI) lab down --stale
