/*
 * The reference floor for CourierCurl as a standalone program (Benchmarks/curl-comparison.sh):
 * the loop in courier_reference.c, which courier-bench also runs as its `reference` transport.
 *
 *   cc -O2 -Iinclude -o curl_multi_bench curl_multi_bench.c courier_reference.c -lcurl
 *   ./curl_multi_bench URL [CONCURRENCY=64] [SECONDS=5] [VERSION=1.1|2|h2c] [CAFILE]
 */
#include "courier_reference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s URL [CONCURRENCY] [SECONDS] [1.1|2|h2c] [CAFILE]\n", argv[0]);
        return 2;
    }
    courier_reference_options options = {0};
    options.url = argv[1];
    options.concurrency = argc > 2 ? atoi(argv[2]) : 64;
    options.seconds = argc > 3 ? atof(argv[3]) : 5.0;
    const char *version = argc > 4 ? argv[4] : "1.1";
    options.ca_file = argc > 5 ? argv[5] : NULL;
    options.http = strcmp(version, "2") == 0 ? COURIER_REFERENCE_HTTP2_TLS
                   : strcmp(version, "h2c") == 0 ? COURIER_REFERENCE_H2C
                                                 : COURIER_REFERENCE_HTTP1;
    courier_reference_result result;
    int status = courier_reference_run(&options, &result);
    if (status != 0) {
        fprintf(stderr, "%s\n", result.first_error_text);
        return status;
    }
    if (result.failed > 0) fprintf(stderr, "first failure: %s\n", result.first_error_text);
    double seconds = result.seconds > 0 ? result.seconds : 1e-9;
    printf("c-libcurl-multi %s requests=%ld failed=%ld seconds=%.2f requests_per_second=%.0f\n", version, result.completed,
           result.failed, result.seconds, result.completed / seconds);
    return result.failed > 0 ? 1 : 0;
}
