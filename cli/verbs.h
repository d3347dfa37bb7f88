/* verbs.h - the CLI verbs that live in files of their own (cli/VERB.c); each
 * takes the arguments after its name and returns the exit status. */
#ifndef SG_CLI_VERBS_H
#define SG_CLI_VERBS_H

int cli_check(int argc, char **argv);     /* cli/check.c: shellgate check */
int cli_approve(int argc, char **argv);   /* cli/check.c: shellgate approve */
int cli_state(int argc, char **argv);     /* cli/check.c: shellgate state */
int cli_approvals(int argc, char **argv); /* cli/check.c: shellgate approvals */
int cli_revoke(int argc, char **argv);    /* cli/check.c: shellgate revoke */
int cli_run(int argc, char **argv);       /* cli/run.c: shellgate run */
int cli_session(int argc, char **argv);   /* cli/session.c: shellgate session */
int cli_hook(int argc, char **argv);      /* cli/hook.c: shellgate hook AGENT */
int cli_serve(int argc, char **argv);     /* cli/serve.c: shellgate serve */

#endif
