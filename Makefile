# make demo   set everything up, build the graph on the default embedded store, verify four kernels,
#             show a lineage and a comparison of three techniques of the comparison page, and draw
#             the lineage to .kg-demo/lineage.svg
# make picture  redraw the README's docs/lineage.svg the same way, from a fresh store
# make test   set everything up, run ruff, mypy and the import contracts (lint-imports), then the test suite
# make bench  run the benchmarks in bench/ (slow; prints ratios against baselines)
# make notebooks  run notebooks/*.ipynb against a fresh store and save them with their outputs

VENV := .venv/bin

.PHONY: setup demo test bench picture notebooks

setup:
	./scripts/setup

demo: setup
	$(VENV)/kg build
	$(VENV)/kg kernels verify GDN KDA MLA Mamba2
	$(VENV)/kg lineage KDA
	$(VENV)/kg compare GDN KDA MLA
	mkdir -p .kg-demo
	$(VENV)/kg export lineage -o .kg-demo/lineage.svg --force

test: setup
	$(VENV)/ruff check .
	$(VENV)/mypy kg ingest exports queries kernels bench
	$(VENV)/lint-imports --no-cache --no-logo
	$(VENV)/python -m pytest -n 2 --dist loadgroup

bench: setup
	$(VENV)/python -m bench

picture: setup
	rm -rf .kg-demo/picture-store
	$(VENV)/kg --store .kg-demo/picture-store build
	$(VENV)/kg --store .kg-demo/picture-store kernels verify GDN KDA Mamba2
	$(VENV)/kg --store .kg-demo/picture-store export lineage -o docs/lineage.svg --force

notebooks: setup
	$(VENV)/python scripts/run-notebooks
