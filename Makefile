# Convenience targets; the scripts are what README and CI run.
.PHONY: deps run test
deps:
	scripts/install-deps.sh
run:
	scripts/run.sh
test:
	scripts/test.sh
