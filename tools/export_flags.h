/* hfx export's command line: the command's own flags (the model, the config file, the sample
 * shapes, generation) and a flag or two per export option, read from the library's table of
 * options (hfx_option_info_at), which also writes their part of `hfx export --help`. */
#ifndef HFX_TOOLS_EXPORT_FLAGS_H
#define HFX_TOOLS_EXPORT_FLAGS_H

#include <stdbool.h>
#include <stdio.h>

#include "hfx/hfx.h"

enum { EXPORT_MAX_OPTIONS = 64 };

typedef struct export_args {
    const char *model, *out_dir;      /* the two operands */
    const char *format, *config_path; /* --format, --config; NULL when not given */
    const char *revision;             /* --revision; NULL: main */
    const char *task;                 /* --task; NULL: the class config.json names */
    long batch, seq;                  /* the sample's shape (default 2 × 16) */
    bool for_generation, multi_token, quiet, help;
    int n_options;
    hfx_option_info options[EXPORT_MAX_OPTIONS]; /* the library's table, in its order */
    const char *given[EXPORT_MAX_OPTIONS];       /* each option's flag value ("true"/"false" for a bool's),
                                                    the last given; NULL: not given */
    const char *given_as[EXPORT_MAX_OPTIONS];    /* the flag that gave it ("--asym"), for messages */
} export_args;

/* Read argv (argv[0] is "export"). Return 0, or the exit code of a usage error (2, said on stderr). */
int export_args_parse(int argc, char **argv, export_args *a);

/* Set each given option in cfg, in the table's order. Return 0, or the exit code (2 for a value
 * the flag or the config refuses, said on stderr). */
int export_args_apply(const export_args *a, hfx_export_config *cfg);

/* `hfx export --help`. */
void export_help(const export_args *a, FILE *out);

#endif
