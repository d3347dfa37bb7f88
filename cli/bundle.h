/* bundle.h - the fleet's CLI verbs (cli/bundle.c, docs/fleet.md): `bundle build |
 * sign | verify | show` and `keygen`.  Each takes the arguments after its verb and
 * returns the exit status. */
#ifndef SG_CLI_BUNDLE_H
#define SG_CLI_BUNDLE_H

int sg_cli_bundle(int argc, char **argv);
int sg_cli_keygen(int argc, char **argv);

#endif
