#ifndef GRAPHHOST_EDITLINE_H
#define GRAPHHOST_EDITLINE_H

#include <histedit.h>

/* libedit's el_set, el_get and history are variadic, which Swift cannot call: one function per use. */

typedef char *(*ceditline_prompt_fn)(EditLine *el);
/* A key command: returns a CC_* value telling libedit what to redraw. */
typedef unsigned char (*ceditline_command_fn)(EditLine *el, int key);

/* Emacs key bindings, the prompt, `list` for Up/Down, and `client` for the commands (ceditline_client). */
int ceditline_configure(EditLine *el, ceditline_prompt_fn prompt, History *list, void *client);
void *ceditline_client(EditLine *el);
/* A terminal setting while editing, in stty's words ("-isig": Ctrl-C and Ctrl-Z reach libedit as keys). */
int ceditline_setty(EditLine *el, const char *setting);
int ceditline_add_command(EditLine *el, const char *name, const char *help, ceditline_command_fn command);
/* Binds `key` ("^I", "^W") to a command: an added one or a built-in one ("ed-delete-prev-word"). */
int ceditline_bind(EditLine *el, const char *key, const char *command);
/* Unbuffered: el_gets reads one key and returns. Turning it on puts the terminal in raw mode, empties the line,
   forgets the history position and draws the prompt; turning it off restores the terminal. */
int ceditline_set_unbuffered(EditLine *el, int on);
/* el_init on the process's standard input, output and error. */
EditLine *ceditline_init(const char *program);
/* Redraws the prompt and line from scratch, the terminal cursor being where the prompt starts. */
void ceditline_redraw(EditLine *el);

/* Display columns of a character under the current locale: 2 for wide ones (CJK, most emoji), 0 for combining
   and control characters. */
int ceditline_columns(wchar_t c);

/* Keeps at most `size` entries. */
int ceditline_history_set_size(History *list, int size);
/* Loads a history file: how many lines it held, or -1. */
int ceditline_history_load(History *list, const char *path);
/* Writes what the history keeps to a file, replacing it. */
int ceditline_history_save(History *list, const char *path);
int ceditline_history_enter(History *list, const char *line);
/* The latest entry, or NULL. */
const char *ceditline_history_latest(History *list);
/* Appends one line to a history file in libedit's format (a new file gets mode 0600 and libedit's header). */
int ceditline_history_append_line(const char *path, const char *line);

#endif
