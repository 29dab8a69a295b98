/* gpnscope migrate STORE: bring a store to this gpnscope's schema, in one
 * transaction (store/schema.c). Readers never migrate (they open the file
 * read-only); writers migrate on open; this command does only that. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "store/store.h"

static const char *help =
    "usage: gpnscope migrate STORE\n\n"
    "Bring STORE to this gpnscope's store schema (version " "%d" "), in one transaction:\n"
    "a file of an older version gains the new tables and the rows its recordings\n"
    "imply (docs/schema.md, \"Versions\"); the recordings and analyses are not\n"
    "changed. Commands that only read never migrate and say when one is needed;\n"
    "commands that write (record, analyze, ablate, import) migrate on open.\n";

int cmd_migrate(int argc, char **argv) {
    char text[2048];
    snprintf(text, sizeof text, help, STORE_SCHEMA_VERSION);
    const cli_opt opts[] = {{0}};
    int parsed = cli_parse_options(&(cli_command_opts){"migrate", text, NULL}, opts, argc, argv);
    if (parsed != CLI_GO_ON) return parsed;
    if (optind != argc - 1) { fputs(text, stderr); return 2; }
    const char *path = argv[optind];
    struct stat sb;
    if (stat(path, &sb) != 0) { fprintf(stderr, "gpnscope migrate: %s: no such store\n", path); return 1; }
    store *st = store_open(path, STORE_WRITE);
    if (!st) { fprintf(stderr, "gpnscope migrate: %s\n", gs_error()); return 1; }
    store_close(st);
    printf("%s: store schema version %d\n", path, STORE_SCHEMA_VERSION);
    return 0;
}
