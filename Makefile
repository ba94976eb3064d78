# Convenience targets; the scripts are what README and CI run.
.PHONY: deps bench run test sanitize stress
deps:
	scripts/install-deps.sh
bench:
	scripts/bench.sh
run:
	scripts/run.sh
test:
	scripts/test.sh
sanitize:
	scripts/sanitize.sh thread
	scripts/sanitize.sh address
stress:
	scripts/stress.sh
