/* The C reference load loop; see include/courier_reference.h. */
#include "courier_reference.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* One transfer slot: its easy handle, when its current request started, and its error buffer. */
typedef struct slot {
    CURL *easy;
    double started; /* the open loop: when the current request was meant to start */
    int waiting;    /* the open loop: its next request waits for its time to come */
    long round;     /* the open loop: requests this slot has been scheduled before the current one */
    double received;
    int resent; /* how often the current request was sent again after a spurious HTTP/2 failure */
    char error[CURL_ERROR_SIZE];
} slot;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_now(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
    return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 + (double)usage.ru_stime.tv_sec +
           (double)usage.ru_stime.tv_usec / 1e6;
}

static size_t count_body(char *data, size_t size, size_t count, void *user) {
    (void)data;
    ((slot *)user)->received += (double)(size * count);
    return size * count;
}

static int fail_setup(courier_reference_result *result, const char *what, int code) {
    result->first_error = code;
    snprintf(result->first_error_text, sizeof result->first_error_text, "%s failed with %d", what, code);
    return 1;
}

#define SETOPT(easy, option, value)                                                       \
    do {                                                                                  \
        CURLcode code_ = curl_easy_setopt((easy), (option), (value));                     \
        if (code_ != CURLE_OK) return fail_setup(result, "curl_easy_setopt(" #option ")", \
                                                 (int)code_);                             \
    } while (0)

static int setup(slot *s, const courier_reference_options *o, struct curl_slist *headers,
                 courier_reference_result *result) {
    long version = CURL_HTTP_VERSION_1_1;
    if (o->http == COURIER_REFERENCE_HTTP2_TLS) version = CURL_HTTP_VERSION_2TLS;
    if (o->http == COURIER_REFERENCE_H2C) version = CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
    SETOPT(s->easy, CURLOPT_URL, o->url);
    SETOPT(s->easy, CURLOPT_WRITEFUNCTION, count_body);
    SETOPT(s->easy, CURLOPT_WRITEDATA, (void *)s);
    SETOPT(s->easy, CURLOPT_PRIVATE, (void *)s);
    SETOPT(s->easy, CURLOPT_ERRORBUFFER, s->error);
    SETOPT(s->easy, CURLOPT_NOSIGNAL, 1L);
    SETOPT(s->easy, CURLOPT_HTTP_VERSION, version);
    SETOPT(s->easy, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    SETOPT(s->easy, CURLOPT_TIMEOUT_MS, o->timeout_seconds > 0 ? (long)(o->timeout_seconds * 1000) : 60000L);
    if (version != CURL_HTTP_VERSION_1_1) SETOPT(s->easy, CURLOPT_PIPEWAIT, 1L);
    if (o->ca_file) SETOPT(s->easy, CURLOPT_CAINFO, o->ca_file);
    if (headers) SETOPT(s->easy, CURLOPT_HTTPHEADER, headers);
    if (o->body) {
        SETOPT(s->easy, CURLOPT_POSTFIELDS, o->body);
        SETOPT(s->easy, CURLOPT_POSTFIELDSIZE, o->body_length);
    }
    if (o->method && strcmp(o->method, "HEAD") == 0) {
        SETOPT(s->easy, CURLOPT_NOBODY, 1L);
    } else if (o->method && strcmp(o->method, o->body ? "POST" : "GET") != 0) {
        SETOPT(s->easy, CURLOPT_CUSTOMREQUEST, o->method);
    }
    return 0;
}

int courier_reference_run(const courier_reference_options *o, courier_reference_result *result) {
    memset(result, 0, sizeof *result);
    if (!o || !o->url || o->concurrency < 1 || o->concurrency > 10000 || o->seconds <= 0 || o->seconds > 3600 ||
        o->warmup_seconds < 0 || o->warmup_seconds > 3600 || o->max_requests < 0 || o->http < 0 || o->http > 2 ||
        (o->body && (o->body_length < 0 || o->body_length > (16L << 20))) || o->header_count < 0 ||
        o->header_count > 1000 || (o->header_count > 0 && !o->headers) || o->timeout_seconds < 0 ||
        o->timeout_seconds > 3600 || !(o->rate >= 0 && o->rate <= 1e7)) {
        snprintf(result->first_error_text, sizeof result->first_error_text, "invalid options");
        return 2;
    }
    CURLcode global = curl_global_init(CURL_GLOBAL_ALL);
    if (global != CURLE_OK) return fail_setup(result, "curl_global_init", (int)global);

    int status = 1;
    int timer = -1; /* the open loop's timerfd */
    CURLM *multi = curl_multi_init();
    struct curl_slist *headers = NULL;
    int headers_ok = 1;
    for (int i = 0; i < o->header_count && headers_ok; i++) {
        struct curl_slist *grown = o->headers[i] ? curl_slist_append(headers, o->headers[i]) : NULL;
        if (grown) headers = grown; else headers_ok = 0;
    }
    slot *slots = calloc((size_t)o->concurrency, sizeof(slot));
    if (!multi || !headers_ok || !slots) {
        snprintf(result->first_error_text, sizeof result->first_error_text, "out of memory");
        goto done;
    }
    CURLMcode mcode = curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)o->concurrency);
    if (mcode == CURLM_OK) mcode = curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    if (mcode != CURLM_OK) {
        fail_setup(result, "curl_multi_setopt", (int)mcode);
        goto done;
    }

    double begin = now();
    double counting_from = begin + o->warmup_seconds;
    double end = counting_from + o->seconds;
    double last_completion = counting_from;
    /* The open loop: slot i's n-th request is due at begin + (i + n * concurrency) / rate, and a
       timerfd wakes curl_multi_poll at that time to the nanosecond (a millisecond poll timeout
       would send up to a millisecond late and count it as latency). */
    int open_loop = o->rate > 0;
    if (open_loop) {
        timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (timer < 0) {
            fail_setup(result, "timerfd_create", errno);
            goto done;
        }
    }
    long started = 0; /* counted requests started */
    double cpu_at_count = o->warmup_seconds > 0 ? -1 : cpu_now(); /* -1: the counted run has not begun */
    int in_flight = 0;
    int waiting = 0;
    for (int i = 0; i < o->concurrency; i++) {
        slots[i].easy = curl_easy_init();
        if (!slots[i].easy) {
            snprintf(result->first_error_text, sizeof result->first_error_text, "curl_easy_init failed");
            goto done;
        }
        if (setup(&slots[i], o, headers, result) != 0) goto done;
        slots[i].started = open_loop ? begin + (double)i / o->rate : begin;
        if (slots[i].started >= end) continue;
        if (slots[i].started >= counting_from) started++;
        if (slots[i].started > begin) {
            slots[i].waiting = 1;
            waiting++;
            continue;
        }
        mcode = curl_multi_add_handle(multi, slots[i].easy);
        if (mcode != CURLM_OK) {
            fail_setup(result, "curl_multi_add_handle", (int)mcode);
            goto done;
        }
        in_flight++;
    }

    /* Runs until every transfer has ended after the counted run stops starting new ones; a
       transfer cannot outlive its 60 s CURLOPT_TIMEOUT, so this loop ends by itself. */
    while (in_flight > 0 || waiting > 0) {
        int running = 0;
        if (cpu_at_count < 0 && now() >= counting_from) cpu_at_count = cpu_now();
        mcode = curl_multi_perform(multi, &running);
        if (mcode != CURLM_OK) {
            fail_setup(result, "curl_multi_perform", (int)mcode);
            goto done;
        }
        CURLMsg *message;
        int left;
        while ((message = curl_multi_info_read(multi, &left))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *easy = message->easy_handle;
            slot *s = NULL;
            if (curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&s) != CURLE_OK || !s) {
                snprintf(result->first_error_text, sizeof result->first_error_text, "a transfer lost its slot");
                goto done;
            }
            /* libcurl before 8.0 fails a fraction of HTTP/2 transfers on a healthy connection (curl
               issue 10634): a framing error, then stream errors or "Connection died" for the other
               streams of the connection it closes. Courier's curl transport sends such a GET again
               (at most twice, before the caller has seen any of it); so does the reference, so that
               the two stay comparable. */
            CURLcode failure = message->data.result;
            if (o->http != COURIER_REFERENCE_HTTP1 && s->resent < 2 && !o->body &&
                (!o->method || strcmp(o->method, "GET") == 0 || strcmp(o->method, "HEAD") == 0) &&
                (failure == CURLE_HTTP2 || failure == CURLE_HTTP2_STREAM || failure == CURLE_SEND_ERROR ||
                 failure == CURLE_RECV_ERROR || failure == CURLE_PARTIAL_FILE || failure == CURLE_GOT_NOTHING) &&
                curl_version_info(CURLVERSION_NOW)->version_num < 0x080000) {
                s->resent++;
                s->received = 0;
                s->error[0] = 0;
                mcode = curl_multi_remove_handle(multi, easy);
                if (mcode == CURLM_OK) mcode = curl_multi_add_handle(multi, easy);
                if (mcode != CURLM_OK) {
                    fail_setup(result, "curl_multi_add_handle (resend)", (int)mcode);
                    goto done;
                }
                continue;
            }
            double finished = now();
            if (s->started >= counting_from) {
                long code = 0;
                CURLcode info = curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
                int ok = message->data.result == CURLE_OK && info == CURLE_OK && code >= 200 && code < 300;
                if (ok) {
                    result->completed++;
                    result->bytes_received += s->received;
                    result->bytes_sent += o->body ? (double)o->body_length : 0;
                    long version = 0;
                    if (curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &version) == CURLE_OK) result->http_version = version;
                    if (o->record) o->record(o->context, finished - s->started);
                } else {
                    result->failed++;
                    if (result->failed == 1) {
                        if (message->data.result != CURLE_OK) {
                            result->first_error = (int)message->data.result;
                            snprintf(result->first_error_text, sizeof result->first_error_text, "%s",
                                     s->error[0] ? s->error : curl_easy_strerror(message->data.result));
                        } else {
                            result->first_error = -1;
                            result->first_status = code;
                            snprintf(result->first_error_text, sizeof result->first_error_text, "HTTP status %ld", code);
                        }
                    }
                }
                last_completion = finished;
            }
            mcode = curl_multi_remove_handle(multi, easy);
            if (mcode != CURLM_OK) {
                fail_setup(result, "curl_multi_remove_handle", (int)mcode);
                goto done;
            }
            in_flight--;
            /* The closed loop sends the next request now; the open loop at the slot's next time, or
               now when that has passed (its latency still counts from that time). */
            double next = finished;
            if (open_loop) {
                s->round++;
                next = begin + (double)((s - slots) + s->round * (long)o->concurrency) / o->rate;
            }
            int counting = next >= counting_from;
            int more = next < end && finished < end && (!counting || o->max_requests == 0 || started < o->max_requests);
            if (more) {
                s->started = next;
                s->received = 0;
                s->resent = 0;
                s->error[0] = 0;
                if (counting) started++;
                if (next > finished) {
                    s->waiting = 1;
                    waiting++;
                    continue;
                }
                mcode = curl_multi_add_handle(multi, easy);
                if (mcode != CURLM_OK) {
                    fail_setup(result, "curl_multi_add_handle", (int)mcode);
                    goto done;
                }
                in_flight++;
            }
        }
        /* The open loop: send what is due, and sleep no longer than until the next send. */
        int timeout_ms = 100;
        if (waiting > 0) {
            double t = now();
            double soonest = t + 0.1;
            for (int i = 0; i < o->concurrency; i++) {
                if (!slots[i].waiting) continue;
                if (slots[i].started > t) {
                    if (slots[i].started < soonest) soonest = slots[i].started;
                    continue;
                }
                slots[i].waiting = 0;
                waiting--;
                mcode = curl_multi_add_handle(multi, slots[i].easy);
                if (mcode != CURLM_OK) {
                    fail_setup(result, "curl_multi_add_handle", (int)mcode);
                    goto done;
                }
                in_flight++;
            }
            if (waiting > 0) {
                struct itimerspec due;
                memset(&due, 0, sizeof due);
                double whole = floor(soonest);
                due.it_value.tv_sec = (time_t)whole;
                due.it_value.tv_nsec = (long)((soonest - whole) * 1e9);
                if (due.it_value.tv_nsec >= 1000000000L) due.it_value.tv_nsec = 999999999L;
                if (timerfd_settime(timer, TFD_TIMER_ABSTIME, &due, NULL) != 0) {
                    fail_setup(result, "timerfd_settime", errno);
                    goto done;
                }
            }
        }
        if (in_flight == 0 && waiting == 0) break;
        struct curl_waitfd wake = {timer, CURL_WAIT_POLLIN, 0};
        mcode = curl_multi_poll(multi, open_loop ? &wake : NULL, open_loop ? 1 : 0, timeout_ms, NULL);
        if (mcode == CURLM_OK && open_loop && wake.revents) {
            uint64_t expirations;
            if (read(timer, &expirations, sizeof expirations) < 0 && errno != EAGAIN) {
                fail_setup(result, "read(timerfd)", errno);
                goto done;
            }
        }
        if (mcode != CURLM_OK) {
            fail_setup(result, "curl_multi_poll", (int)mcode);
            goto done;
        }
    }
    result->seconds = last_completion - counting_from;
    result->cpu_seconds = cpu_at_count < 0 ? 0 : cpu_now() - cpu_at_count;
    status = 0;

done:
    if (slots) {
        for (int i = 0; i < o->concurrency; i++) {
            if (!slots[i].easy) continue;
            if (multi) curl_multi_remove_handle(multi, slots[i].easy); /* not added: CURLM_OK or harmless */
            curl_easy_cleanup(slots[i].easy);
        }
        free(slots);
    }
    if (timer >= 0) close(timer);
    if (multi) curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
    curl_global_cleanup();
    return status;
}
