#ifndef GH_CURL_GLUE_H
#define GH_CURL_GLUE_H
#include <stddef.h>

/// One HTTP GET through libcurl (whose setopt/getinfo are variadic, so Swift cannot call them directly).
/// Redirects are followed up to max_redirects; only http and https; TLS peers and hosts are verified.
typedef struct {
    const char *url;
    long long range_from;     /* > 0: ask for bytes range_from- */
    int icy_metadata;         /* send Icy-MetaData: 1 */
    long connect_timeout_ms;
    long max_redirects;
} gh_http_request;

typedef struct {
    int curl_code;            /* CURLE_OK (0) or the failure */
    long status;              /* the final response's status, 0 if none */
    char error[256];          /* curl's message for a failure */
} gh_http_result;

/* Body bytes of the final response: return size to go on, anything else aborts the transfer. */
typedef size_t (*gh_http_data_fn)(const char *data, size_t size, void *user);
/* Each header line of every response (redirects included; a status line starts a response). */
typedef void (*gh_http_header_fn)(const char *line, size_t size, void *user);
/* Called often while the transfer runs; nonzero aborts it (cancellation, read timeouts). */
typedef int (*gh_http_poll_fn)(void *user);

void gh_http_perform(const gh_http_request *request, gh_http_data_fn data,
                            gh_http_header_fn header, gh_http_poll_fn poll, void *user,
                            gh_http_result *result);

/* Loads libcurl (once; gh_http_perform does it too). */
void gh_http_global_init(void);

#endif
