/* Which class a config without `architectures` builds: transformers' Auto classes pick it from model_type and the
 * task (AutoModelForCausalLM for text-generation, AutoModel for feature-extraction, ...), as optimum names the tasks.
 * The table (auto_classes.def) is generated from transformers' mappings by tools/gen_auto_classes.py, restricted to
 * the classes hfx exports. */
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"

static const struct {
    const char *model_type, *task, *cls;
} rows[] = {
#define X(model_type, task, cls) {model_type, task, cls},
#include "arch/auto_classes.def"
#undef X
};

static const char *const tasks[] = {"text-generation", "text2text-generation", "image-text-to-text",
                                    "automatic-speech-recognition", "feature-extraction", "text-classification",
                                    "audio-classification", "token-classification", "fill-mask", "question-answering",
                                    "image-classification", "zero-shot-image-classification", NULL};

/* task without optimum's "-with-past" (the generation exports' form of a task) */
static size_t task_length(const char *task) {
    static const char past[] = "-with-past";
    size_t n = strlen(task), p = sizeof past - 1;
    return n > p && strcmp(task + n - p, past) == 0 ? n - p : n;
}

static bool same_task(const char *known, const char *task) {
    size_t n = task_length(task);
    return strlen(known) == n && strncmp(known, task, n) == 0;
}

bool hfx_task_known(const char *task) {
    for (int i = 0; tasks[i]; i++)
        if (same_task(tasks[i], task)) return true;
    return false;
}

const char *hfx_task_names(char *buf, size_t size) {
    size_t k = 0;
    for (int i = 0; tasks[i] && k < size; i++) k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? ", " : "", tasks[i]);
    if (k < size) snprintf(buf + k, size - k, " (each also with -with-past)");
    return buf;
}

const char *hfx_auto_class(const char *model_type, const char *task) {
    const char *found = NULL;
    int n = 0;
    for (size_t i = 0; model_type && i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(rows[i].model_type, model_type) == 0 && (!task || same_task(rows[i].task, task)))
            found = rows[i].cls, n++;
    return n == 1 ? found : NULL; /* (one row per model_type and task) */
}

const char *hfx_auto_choices(const char *model_type, char *buf, size_t size) {
    size_t k = 0;
    if (size) buf[0] = 0;
    for (size_t i = 0; model_type && i < sizeof rows / sizeof rows[0] && k < size; i++)
        if (strcmp(rows[i].model_type, model_type) == 0)
            k += (size_t)snprintf(buf + k, size - k, "%s--task %s (%s)", k ? ", " : "", rows[i].task, rows[i].cls);
    return buf;
}
