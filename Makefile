# make demo   set everything up, build the graph on the default embedded store, verify three kernels,
#             show a lineage and a comparison, and regenerate docs/lineage.svg
# make test   set everything up, run ruff and mypy, then the test suite
# make bench  run the benchmarks in bench/ (slow; prints ratios against baselines)

VENV := .venv/bin

.PHONY: setup demo test bench

setup:
	./scripts/setup

demo: setup
	$(VENV)/kg build
	$(VENV)/kg kernels verify GDN KDA Mamba2
	$(VENV)/kg lineage KDA
	$(VENV)/kg compare GDN KDA Mamba2
	$(VENV)/kg export lineage -o docs/lineage.svg --force

test: setup
	$(VENV)/ruff check .
	$(VENV)/mypy kg ingest exports queries kernels
	$(VENV)/python -m pytest -n 2 --dist loadgroup

bench: setup
	$(VENV)/python -m bench
