// The thin C boundary for CourierCurl: only what Swift cannot import from libcurl directly.
//
// `curl_easy_setopt`, `curl_easy_getinfo` and `curl_multi_setopt` are variadic, so Swift cannot
// call them; these typed wrappers pass one argument of a known type. Every wrapper returns
// libcurl's code unchanged: the Swift side checks each one in a single helper.
// Names carry the `ccurl_` prefix so they never collide with libcurl's own.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#pragma clang assume_nonnull begin

/// Names the calling thread for the kernel (`/proc/self/task/*/comm`, at most 15 bytes kept):
/// `prctl` is variadic, so Swift cannot call it. Returns 0, or -1 with `errno` set.
static inline int ccurl_name_this_thread(const char *name) {
#ifdef __linux__
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
#else
    (void)name;
    return 0;
#endif
}

/// `curl_easy_setopt` with a `long` argument.
static inline CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// `curl_easy_setopt` with a `curl_off_t` argument (the `*_LARGE` options).
static inline CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// `curl_easy_setopt` with a string argument (libcurl copies it), or NULL to reset the option.
static inline CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *_Nullable value) {
    return curl_easy_setopt(handle, option, value);
}

/// `curl_easy_setopt` with an opaque pointer (callback user data, `curl_slist`), or NULL.
static inline CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *_Nullable value) {
    return curl_easy_setopt(handle, option, value);
}

/// `curl_easy_setopt` with a blob (libcurl copies the bytes: `CURL_BLOB_COPY`).
static inline CURLcode ccurl_easy_setopt_blob(CURL *handle, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob;
    blob.data = (void *)data;
    blob.len = length;
    blob.flags = CURL_BLOB_COPY;
    return curl_easy_setopt(handle, option, &blob);
}

/// The signature of the write and header callbacks.
typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t count, void *_Nullable user);
/// The signature of the read callback.
typedef size_t (*ccurl_read_callback)(char *buffer, size_t size, size_t count, void *_Nullable user);

/// The signature of `CURLOPT_PREREQFUNCTION` (called once a connection is ready, before the request is sent).
typedef int (*ccurl_prereq_callback)(void *_Nullable user, char *primary_ip, char *local_ip, int primary_port, int local_port);

/// Sets `CURLOPT_PREREQFUNCTION`.
static inline CURLcode ccurl_easy_setopt_prereq_callback(CURL *handle, ccurl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}

/// Sets `CURLOPT_WRITEFUNCTION` or `CURLOPT_HEADERFUNCTION`.
static inline CURLcode ccurl_easy_setopt_data_callback(CURL *handle, CURLoption option, ccurl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

/// Sets `CURLOPT_READFUNCTION`.
static inline CURLcode ccurl_easy_setopt_read_callback(CURL *handle, ccurl_read_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
}

/// The signature of `CURLOPT_SEEKFUNCTION`.
typedef int (*ccurl_seek_callback)(void *_Nullable user, curl_off_t offset, int origin);

/// Sets `CURLOPT_SEEKFUNCTION` and `CURLOPT_SEEKDATA` (`NULL`: no rewinding).
static inline CURLcode ccurl_easy_setopt_seek(CURL *handle, ccurl_seek_callback _Nullable callback, void *_Nullable user) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_SEEKDATA, user);
}

/// Sets `CURLOPT_OPENSOCKETFUNCTION` and `CURLOPT_OPENSOCKETDATA`.
static inline CURLcode ccurl_easy_setopt_opensocket(CURL *handle, curl_opensocket_callback callback, void *_Nullable user) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, user);
}

/// Sets `CURLOPT_CLOSESOCKETFUNCTION` and `CURLOPT_CLOSESOCKETDATA`.
static inline CURLcode ccurl_easy_setopt_closesocket(CURL *handle, curl_closesocket_callback callback, void *_Nullable user) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, callback);
    return code != CURLE_OK ? code : curl_easy_setopt(handle, CURLOPT_CLOSESOCKETDATA, user);
}

/// Opens a socket as libcurl's default does, but close-on-exec, so a service's child processes
/// never inherit a connection. -1 on failure.
static inline int ccurl_open_socket(int family, int socktype, int protocol) {
    return socket(family, socktype | SOCK_CLOEXEC, protocol);
}

/// Writes `address` as `ip:port` (IPv6 as `[ip]:port`) into `buffer`; returns 0, or -1 for an
/// address family other than IPv4 and IPv6 or a buffer too small.
static inline int ccurl_format_address(const struct curl_sockaddr *address, char *buffer, size_t size) {
    char ip[INET6_ADDRSTRLEN];
    int written;
    if (address->family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)&address->addr;
        if (!inet_ntop(AF_INET, &v4->sin_addr, ip, sizeof ip)) return -1;
        written = snprintf(buffer, size, "%s:%u", ip, (unsigned)ntohs(v4->sin_port));
    } else if (address->family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&address->addr;
        if (!inet_ntop(AF_INET6, &v6->sin6_addr, ip, sizeof ip)) return -1;
        written = snprintf(buffer, size, "[%s]:%u", ip, (unsigned)ntohs(v6->sin6_port));
    } else {
        return -1;
    }
    return written > 0 && (size_t)written < size ? 0 : -1;
}

/// `curl_easy_getinfo` for a `long` result.
static inline CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// `curl_easy_getinfo` for a `curl_off_t` result (the `*_T` infos).
static inline CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// `curl_easy_getinfo` for a string result; the string belongs to libcurl and may be NULL.
static inline CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, const char *_Nullable *_Nonnull value) {
    return curl_easy_getinfo(handle, info, value);
}

/// `curl_easy_getinfo` for a pointer result (`CURLINFO_PRIVATE`).
static inline CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void *_Nullable *_Nonnull value) {
    return curl_easy_getinfo(handle, info, value);
}

/// `curl_multi_setopt` with a `long` argument.
static inline CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// `CURLPAUSE_CONT` (a compound macro Swift does not import).
static const int ccurl_pause_continue = CURLPAUSE_CONT;
/// `CURLPAUSE_RECV`: the receiving direction stays paused.
static const int ccurl_pause_receiving = CURLPAUSE_RECV;
/// `CURLPAUSE_SEND`: the sending direction stays paused.
static const int ccurl_pause_sending = CURLPAUSE_SEND;

/// The linked libcurl's version as `0xXXYYZZ`, read at run time.
static inline unsigned int ccurl_version_number(void) {
    const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return info ? info->version_num : 0;
}

/// The linked libcurl's version string, for messages.
static inline const char *ccurl_version_string(void) {
    const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return (info && info->version) ? info->version : "unknown";
}

/// Whether the linked libcurl was built with HTTP/2 support.
static inline int ccurl_has_http2(void) {
    const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return info ? ((info->features & CURL_VERSION_HTTP2) != 0) : 0;
}

// MARK: Allocation failure (tests only)
//
// libcurl takes its allocator from `curl_global_init_mem`. These wrappers count what libcurl
// allocates and frees, and can fail the Nth allocation from a given moment, as curl's own torture
// tests do: libcurl then reports CURLE_OUT_OF_MEMORY from whichever call needed the memory.

/// Allocations left before one fails; negative: none fails.
static _Atomic long ccurl_alloc_countdown = -1;
/// Allocations that were failed on purpose.
static _Atomic long ccurl_alloc_failed = 0;
/// Blocks libcurl holds now (allocated and not yet freed).
static _Atomic long ccurl_alloc_live = 0;

/// Whether this allocation is the one to fail.
static inline int ccurl_alloc_should_fail(void) {
    long left = atomic_load(&ccurl_alloc_countdown);
    while (left >= 0) {
        if (atomic_compare_exchange_weak(&ccurl_alloc_countdown, &left, left - 1)) {
            if (left == 0) {
                atomic_fetch_add(&ccurl_alloc_failed, 1);
                return 1;
            }
            return 0;
        }
    }
    return 0;
}

static void *_Nullable ccurl_alloc_malloc(size_t size) {
    if (ccurl_alloc_should_fail()) return NULL;
    void *block = malloc(size);
    if (block) atomic_fetch_add(&ccurl_alloc_live, 1);
    return block;
}

static void ccurl_alloc_free(void *_Nullable block) {
    if (block) atomic_fetch_sub(&ccurl_alloc_live, 1);
    free(block);
}

static void *_Nullable ccurl_alloc_realloc(void *_Nullable block, size_t size) {
    if (ccurl_alloc_should_fail()) return NULL;
    void *moved = realloc(block, size);
    if (moved && !block) atomic_fetch_add(&ccurl_alloc_live, 1);
    return moved;
}

static char *_Nullable ccurl_alloc_strdup(const char *text) {
    if (ccurl_alloc_should_fail()) return NULL;
    char *copy = strdup(text);
    if (copy) atomic_fetch_add(&ccurl_alloc_live, 1);
    return copy;
}

static void *_Nullable ccurl_alloc_calloc(size_t count, size_t size) {
    if (ccurl_alloc_should_fail()) return NULL;
    void *block = calloc(count, size);
    if (block) atomic_fetch_add(&ccurl_alloc_live, 1);
    return block;
}

/// `curl_global_init` with the counting allocator. Must be the process's first libcurl call.
static inline CURLcode ccurl_global_init_counting(long flags) {
    return curl_global_init_mem(
        flags, ccurl_alloc_malloc, ccurl_alloc_free, ccurl_alloc_realloc, ccurl_alloc_strdup, ccurl_alloc_calloc);
}

/// Fails the allocation `after` allocations from now (0: the next one); negative: none.
static inline void ccurl_alloc_fail_after(long after) { atomic_store(&ccurl_alloc_countdown, after); }

/// Allocations failed on purpose so far.
static inline long ccurl_alloc_failures(void) { return atomic_load(&ccurl_alloc_failed); }

/// Blocks libcurl holds now.
static inline long ccurl_alloc_outstanding(void) { return atomic_load(&ccurl_alloc_live); }

#pragma clang assume_nonnull end

#endif
