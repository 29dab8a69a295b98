/* The table of gpnscope commands; each cmd_* gets argv starting at its name. */
#ifndef GS_CLI_COMMANDS_H
#define GS_CLI_COMMANDS_H

typedef struct {
    const char *name, *summary;
    int (*run)(int argc, char **argv);
} cli_command;

int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);

#endif
