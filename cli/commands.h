/* The table of gpnscope commands; each cmd_* gets argv starting at its name. */
#ifndef GS_CLI_COMMANDS_H
#define GS_CLI_COMMANDS_H

typedef struct {
    const char *name, *summary;
    int (*run)(int argc, char **argv);
} cli_command;

int cmd_demo(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_shard(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_ablate(int argc, char **argv);
int cmd_patch(int argc, char **argv);
int cmd_steer(int argc, char **argv);
int cmd_lens(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_controls(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_export_notebook(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_recurrence_depth(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_attention(int argc, char **argv);
int cmd_attribute(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_automaton(int argc, char **argv);

#endif
