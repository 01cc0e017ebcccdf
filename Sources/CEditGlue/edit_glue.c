#define _XOPEN_SOURCE 700
#include "edit_glue.h"
#include <stddef.h>
#include <wchar.h>

int gh_edit_configure(EditLine *el, gh_edit_prompt_fn prompt, History *list, void *client) {
    if (el_set(el, EL_EDITOR, "emacs") != 0) return -1;
    if (el_set(el, EL_PROMPT, prompt) != 0) return -1;
    if (el_set(el, EL_HIST, history, list) != 0) return -1;
    return el_set(el, EL_CLIENTDATA, client);
}

void *gh_edit_client(EditLine *el) {
    void *client = NULL;
    el_get(el, EL_CLIENTDATA, &client);
    return client;
}

int gh_edit_setty(EditLine *el, const char *setting) {
    return el_set(el, EL_SETTY, "-d", setting, NULL);
}

int gh_edit_add_command(EditLine *el, const char *name, const char *help, gh_edit_command_fn command) {
    return el_set(el, EL_ADDFN, name, help, command);
}

int gh_edit_bind(EditLine *el, const char *key, const char *command) {
    return el_set(el, EL_BIND, key, command, NULL);
}

EditLine *gh_edit_init(const char *program) {
    return el_init(program, stdin, stdout, stderr);
}

int gh_edit_set_unbuffered(EditLine *el, int on) {
    return el_set(el, EL_UNBUFFERED, on);
}

void gh_edit_redraw(EditLine *el) {
    el_set(el, EL_REFRESH);
}

int gh_edit_columns(wchar_t c) {
    int columns = wcwidth(c);
    return columns < 0 ? 0 : columns;
}

int gh_edit_history_set_size(History *list, int size) {
    HistEvent event;
    return history(list, &event, H_SETSIZE, size);
}

int gh_edit_history_load(History *list, const char *path) {
    HistEvent event;
    return history(list, &event, H_LOAD, path);
}

int gh_edit_history_save(History *list, const char *path) {
    HistEvent event;
    return history(list, &event, H_SAVE, path);
}

int gh_edit_history_enter(History *list, const char *line) {
    HistEvent event;
    return history(list, &event, H_ENTER, line);
}

const char *gh_edit_history_latest(History *list) {
    HistEvent event;
    return history(list, &event, H_FIRST) == -1 ? NULL : event.str;
}

int gh_edit_history_append_line(const char *path, const char *line) {
    /* A one-entry history saved with H_SAVE_FP: H_NSAVE_FP with n = 1 writes the latest two entries in
       libedit 3.1-20221030. */
    History *one = history_init();
    if (one == NULL) return -1;
    HistEvent event;
    int result = -1;
    FILE *file = NULL;
    if (history(one, &event, H_SETSIZE, 1) != -1 && history(one, &event, H_ENTER, line) != -1
        && (file = fopen(path, "a")) != NULL) {
        result = history(one, &event, H_SAVE_FP, file);
        if (fclose(file) != 0) result = -1;
    }
    history_end(one);
    return result;
}
