#ifndef GH_EDIT_GLUE_H
#define GH_EDIT_GLUE_H

#include <histedit.h>

/* libedit's el_set, el_get and history are variadic, which Swift cannot call: one function per use. */

typedef char *(*gh_edit_prompt_fn)(EditLine *el);
/* A key command: returns a CC_* value telling libedit what to redraw. */
typedef unsigned char (*gh_edit_command_fn)(EditLine *el, int key);

/* Emacs key bindings, the prompt, `list` for Up/Down, and `client` for the commands (gh_edit_client). */
int gh_edit_configure(EditLine *el, gh_edit_prompt_fn prompt, History *list, void *client);
void *gh_edit_client(EditLine *el);
/* A terminal setting while editing, in stty's words ("-isig": Ctrl-C and Ctrl-Z reach libedit as keys). */
int gh_edit_setty(EditLine *el, const char *setting);
int gh_edit_add_command(EditLine *el, const char *name, const char *help, gh_edit_command_fn command);
/* Binds `key` ("^I", "^W") to a command: an added one or a built-in one ("ed-delete-prev-word"). */
int gh_edit_bind(EditLine *el, const char *key, const char *command);
/* Unbuffered: el_gets reads one key and returns. Turning it on puts the terminal in raw mode, empties the line,
   forgets the history position and draws the prompt; turning it off restores the terminal. */
int gh_edit_set_unbuffered(EditLine *el, int on);
/* el_init on the process's standard input, output and error. */
EditLine *gh_edit_init(const char *program);
/* Redraws the prompt and line from scratch, the terminal cursor being where the prompt starts. */
void gh_edit_redraw(EditLine *el);

/* Display columns of a character under the current locale: 2 for wide ones (CJK, most emoji), 0 for combining
   and control characters. */
int gh_edit_columns(wchar_t c);

/* Keeps at most `size` entries. */
int gh_edit_history_set_size(History *list, int size);
/* Loads a history file: how many lines it held, or -1. */
int gh_edit_history_load(History *list, const char *path);
/* Writes what the history keeps to a file, replacing it. */
int gh_edit_history_save(History *list, const char *path);
int gh_edit_history_enter(History *list, const char *line);
/* The latest entry, or NULL. */
const char *gh_edit_history_latest(History *list);
/* Appends one line to a history file in libedit's format (a new file gets mode 0600 and libedit's header). */
int gh_edit_history_append_line(const char *path, const char *line);

#endif
