#include "curl_glue.h"
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* libcurl is loaded with dlopen when the first HTTP stream starts: linked, it and its TLS, SSH, LDAP and RTMP
 * dependencies would be mapped by every graphhost process, though most graphs play local files. */
static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
    CURLcode (*easy_perform)(CURL *curl);
    CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
    void (*easy_cleanup)(CURL *curl);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *string);
    void (*slist_free_all)(struct curl_slist *list);
} curl_api;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static char curl_failure[256];

static void load_curl(void) {
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(curl_failure, sizeof curl_failure, "cannot load libcurl: %s", dlerror());
        return;
    }
#define RESOLVE(field, name) \
    if (!(*(void **)&curl_api.field = dlsym(library, name))) { \
        snprintf(curl_failure, sizeof curl_failure, "cannot load libcurl: %s", dlerror()); \
        return; \
    }
    RESOLVE(global_init, "curl_global_init")
    RESOLVE(easy_init, "curl_easy_init")
    RESOLVE(easy_setopt, "curl_easy_setopt")
    RESOLVE(easy_perform, "curl_easy_perform")
    RESOLVE(easy_getinfo, "curl_easy_getinfo")
    RESOLVE(easy_cleanup, "curl_easy_cleanup")
    RESOLVE(slist_append, "curl_slist_append")
    RESOLVE(slist_free_all, "curl_slist_free_all")
#undef RESOLVE
    curl_api.global_init(CURL_GLOBAL_DEFAULT);
}

typedef struct {
    gh_http_data_fn data;
    gh_http_header_fn header;
    gh_http_poll_fn poll;
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

void gh_http_global_init(void) {
    pthread_once(&curl_once, load_curl);
}

void gh_http_perform(const gh_http_request *request, gh_http_data_fn data,
                            gh_http_header_fn header, gh_http_poll_fn poll, void *user,
                            gh_http_result *result) {
    memset(result, 0, sizeof *result);
    gh_http_global_init();
    if (curl_failure[0]) {
        result->curl_code = CURLE_FAILED_INIT;
        snprintf(result->error, sizeof result->error, "%s", curl_failure);
        return;
    }
    CURL *curl = curl_api.easy_init();
    if (!curl) {
        result->curl_code = CURLE_FAILED_INIT;
        strcpy(result->error, "cannot initialise libcurl");
        return;
    }
    callbacks c = { data, header, poll, user };
    struct curl_slist *headers = NULL;
    if (request->icy_metadata) headers = curl_api.slist_append(headers, "Icy-MetaData: 1");
    curl_api.easy_setopt(curl, CURLOPT_URL, request->url);
    curl_api.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_api.easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_api.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_api.easy_setopt(curl, CURLOPT_MAXREDIRS, request->max_redirects);
    curl_api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, request->connect_timeout_ms);
    curl_api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_api.easy_setopt(curl, CURLOPT_USERAGENT, "graphhost");
    curl_api.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_api.easy_setopt(curl, CURLOPT_WRITEDATA, &c);
    curl_api.easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_api.easy_setopt(curl, CURLOPT_HEADERDATA, &c);
    curl_api.easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_api.easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_api.easy_setopt(curl, CURLOPT_XFERINFODATA, &c);
    curl_api.easy_setopt(curl, CURLOPT_ERRORBUFFER, result->error);
    /* CURLOPT_RANGE (not RESUME_FROM): a server that ignores the range answers 200 and the caller skips ahead. */
    char range[32];
    if (request->range_from > 0) {
        snprintf(range, sizeof range, "%lld-", request->range_from);
        curl_api.easy_setopt(curl, CURLOPT_RANGE, range);
    }
    result->curl_code = curl_api.easy_perform(curl);
    curl_api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result->status);
    curl_api.easy_cleanup(curl);
    curl_api.slist_free_all(headers);
}
