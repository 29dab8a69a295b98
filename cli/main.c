/* gpnscope: the command line. Each command lives in cli/cmd_NAME.c and is
 * listed in the table below; errors are printed as one line and give exit 1
 * (2 for a usage error). */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

static const cli_command commands[] = {
    {"info", "describe a checkpoint: architecture, sizes, parameters, hash", cmd_info},
    {"convert", "convert a companion checkpoint.pkl to safetensors (safely)", cmd_convert},
};

static void usage(FILE *out) {
    fprintf(out,
            "gpnscope %s: measure the inside of single-state recurrent language models (GPN, GPN+M)\n\n"
            "usage: gpnscope COMMAND [options]   (gpnscope COMMAND --help for each)\n\ncommands:\n",
            GPNSCOPE_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-16s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nDocumentation: README.md and docs/ in the source tree.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) { usage(stderr); return 2; }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) { usage(stdout); return 0; }
    if (!strcmp(argv[1], "--version")) { printf("gpnscope %s\n", GPNSCOPE_VERSION); return 0; }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "gpnscope: unknown command '%s' (see gpnscope --help)\n", argv[1]);
    return 2;
}
