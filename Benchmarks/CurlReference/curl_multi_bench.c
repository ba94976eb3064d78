/*
 * The reference floor for CourierCurl: a minimal C client on libcurl's multi interface.
 *
 * Keeps CONCURRENCY GET requests in flight against URL for SECONDS, re-adding each easy handle as
 * soon as it completes, and prints the completed requests per second. No Courier code involved:
 * what this reaches is what libcurl itself can do on this machine.
 *
 *   cc -O2 -o curl_multi_bench curl_multi_bench.c -lcurl
 *   ./curl_multi_bench URL [CONCURRENCY=64] [SECONDS=5] [VERSION=1.1|2|h2c] [CAFILE]
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t discard(char *data, size_t size, size_t count, void *user) {
    (void)data;
    (void)user;
    return size * count;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define CHECK(call)                                                                    \
    do {                                                                               \
        int code_ = (int)(call);                                                       \
        if (code_ != 0) {                                                              \
            fprintf(stderr, "%s failed with %d at line %d\n", #call, code_, __LINE__); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static void setup(CURL *easy, const char *url, long version, const char *cafile) {
    CHECK(curl_easy_setopt(easy, CURLOPT_URL, url));
    CHECK(curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard));
    CHECK(curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L));
    CHECK(curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, version));
    if (version != CURL_HTTP_VERSION_1_1) CHECK(curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L));
    if (cafile) CHECK(curl_easy_setopt(easy, CURLOPT_CAINFO, cafile));
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s URL [CONCURRENCY] [SECONDS] [1.1|2|h2c] [CAFILE]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1];
    int concurrency = argc > 2 ? atoi(argv[2]) : 64;
    double seconds = argc > 3 ? atof(argv[3]) : 5.0;
    const char *versionName = argc > 4 ? argv[4] : "1.1";
    const char *cafile = argc > 5 ? argv[5] : NULL;
    if (concurrency < 1 || concurrency > 10000 || seconds <= 0 || seconds > 600) {
        fprintf(stderr, "concurrency must be 1 to 10000 and seconds 0 to 600\n");
        return 2;
    }
    long version = CURL_HTTP_VERSION_1_1;
    if (strcmp(versionName, "2") == 0) version = CURL_HTTP_VERSION_2TLS;
    if (strcmp(versionName, "h2c") == 0) version = CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE;

    CHECK(curl_global_init(CURL_GLOBAL_ALL));
    CURLM *multi = curl_multi_init();
    if (!multi) return 1;
    CHECK(curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 64L));
    CHECK(curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX));

    for (int i = 0; i < concurrency; i++) {
        CURL *easy = curl_easy_init();
        if (!easy) return 1;
        setup(easy, url, version, cafile);
        CHECK(curl_multi_add_handle(multi, easy));
    }

    long completed = 0, failed = 0;
    double start = now(), end = start + seconds;
    int running = 0;
    while (now() < end) {
        CHECK(curl_multi_perform(multi, &running));
        CURLMsg *message;
        int left;
        while ((message = curl_multi_info_read(multi, &left))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *easy = message->easy_handle;
            if (message->data.result == CURLE_OK) completed++; else failed++;
            CHECK(curl_multi_remove_handle(multi, easy));
            CHECK(curl_multi_add_handle(multi, easy));
        }
        CHECK(curl_multi_poll(multi, NULL, 0, 100, NULL));
    }
    double elapsed = now() - start;
    printf("c-libcurl-multi %s requests=%ld failed=%ld seconds=%.2f requests_per_second=%.0f\n", versionName, completed, failed,
           elapsed, completed / elapsed);
    return failed > 0 ? 1 : 0;
}
