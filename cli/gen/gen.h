/*
 * sarnue gen: writes synthetic InfiniBand fabrics as ibsim net files.
 */
#ifndef SARNUE_GEN_H
#define SARNUE_GEN_H

/* argv[0] is "gen"; returns the process exit status (0, 1 or 2). */
int gen_main(int argc, char **argv);

#endif /* SARNUE_GEN_H */
