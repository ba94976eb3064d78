/*
 * The C reference for courier-bench (its `reference` client): a minimal client on
 * libcurl's multi interface, with no Courier code in it. What it reaches is what libcurl itself can
 * do on the machine; Courier's curl transport is measured as a ratio of it.
 */
#ifndef COURIER_REFERENCE_H
#define COURIER_REFERENCE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Which HTTP version the reference asks libcurl for. */
enum courier_reference_http {
    COURIER_REFERENCE_HTTP1 = 0,     /* HTTP/1.1 only */
    COURIER_REFERENCE_HTTP2_TLS = 1, /* HTTP/2 through TLS ALPN, multiplexed */
    COURIER_REFERENCE_H2C = 2        /* cleartext HTTP/2 with prior knowledge */
};

/* What to run. Every field is read once, at the start. */
typedef struct courier_reference_options {
    const char *url;              /* required */
    int concurrency;              /* 1 to 10000 transfers in flight */
    double warmup_seconds;        /* run this long first without counting (0 for none) */
    double seconds;               /* counted run: start no request after this many seconds (0 < s <= 3600) */
    long max_requests;            /* counted run: start at most this many requests (0: no count limit) */
    int http;                     /* an enum courier_reference_http */
    const char *ca_file;          /* extra CA bundle, or NULL */
    const char *method;           /* the method; NULL: GET, or POST when there is a body */
    const char *const *headers;   /* header lines ("Name: value") sent with every request, or NULL */
    int header_count;             /* 0 to 1000 */
    const char *body;             /* send this body with every request, or NULL for none */
    long body_length;             /* 0 to 16 MiB */
    double timeout_seconds;       /* each request may take this long (0: 60 s) */
    double rate;                  /* open loop: requests per second over all slots, each slot on its own
                                     fixed schedule, latency from the scheduled time (0: closed loop) */
    /* Called for each counted completed request with its latency in seconds (may be NULL). */
    void (*record)(void *context, double latency_seconds);
    void *context;
} courier_reference_options;

/* What happened. */
typedef struct courier_reference_result {
    long completed;               /* counted requests that ended with a 2xx status */
    long failed;                  /* counted requests that failed or ended with another status */
    double seconds;               /* from the start of the counted run to its last completion */
    double bytes_received;        /* response body bytes of counted requests */
    double bytes_sent;            /* request body bytes of counted requests */
    int first_error;              /* the first failure's CURLcode (0: none, -1: an HTTP status) */
    long first_status;            /* the first failure's HTTP status, if it was a status */
    char first_error_text[256];   /* libcurl's error buffer for the first failure */
    long http_version;            /* CURLINFO_HTTP_VERSION of the last counted request */
    double cpu_seconds;           /* user + system CPU seconds of this process during the counted run */
} courier_reference_result;

/*
 * Runs the reference load. Returns 0 when it ran (even with failed requests), 2 for bad options,
 * 1 when libcurl could not be set up (the text says why in result->first_error_text).
 */
int courier_reference_run(const courier_reference_options *options, courier_reference_result *result);

#ifdef __cplusplus
}
#endif

#endif
