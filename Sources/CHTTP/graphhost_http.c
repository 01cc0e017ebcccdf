#include "graphhost_http.h"
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    graphhost_http_data_fn data;
    graphhost_http_header_fn header;
    graphhost_http_poll_fn poll;
    void *user;
} callbacks;

static size_t on_data(char *ptr, size_t size, size_t count, void *user) {
    callbacks *c = user;
    return c->data(ptr, size * count, c->user);
}

static size_t on_header(char *ptr, size_t size, size_t count, void *user) {
    callbacks *c = user;
    c->header(ptr, size * count, c->user);
    return size * count;
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    callbacks *c = user;
    return c->poll(c->user);
}

void graphhost_http_global_init(void) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void graphhost_http_perform(const graphhost_http_request *request, graphhost_http_data_fn data,
                            graphhost_http_header_fn header, graphhost_http_poll_fn poll, void *user,
                            graphhost_http_result *result) {
    memset(result, 0, sizeof *result);
    CURL *curl = curl_easy_init();
    if (!curl) {
        result->curl_code = CURLE_FAILED_INIT;
        strcpy(result->error, "cannot initialise libcurl");
        return;
    }
    callbacks c = { data, header, poll, user };
    struct curl_slist *headers = NULL;
    if (request->icy_metadata) headers = curl_slist_append(headers, "Icy-MetaData: 1");
    curl_easy_setopt(curl, CURLOPT_URL, request->url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, request->max_redirects);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, request->connect_timeout_ms);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "graphhost");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &c);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &c);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &c);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, result->error);
    /* CURLOPT_RANGE (not RESUME_FROM): a server that ignores the range answers 200 and the caller skips ahead. */
    char range[32];
    if (request->range_from > 0) {
        snprintf(range, sizeof range, "%lld-", request->range_from);
        curl_easy_setopt(curl, CURLOPT_RANGE, range);
    }
    result->curl_code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result->status);
    curl_easy_cleanup(curl);
    curl_slist_free_all(headers);
}
