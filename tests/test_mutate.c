/* test_mutate.c - every transformation of cli/mutate.c keeps a command's meaning in bash.
 *
 * For sample commands (pipelines, options, quotes, redirections, compound commands)
 * each transformation and random chains of them are applied; each result must pass
 * `bash -n`, and running it must do what running the original does: the same stub
 * programs with the same argv in the same order, the same files written with the same
 * contents, the same output.  Nothing real runs: PATH is a temporary directory holding
 * only logging stubs (rm, git, curl, ...) and links to the wrappers under test (env,
 * nice, timeout, xargs, sh, bash); the program-path transformations are pointed at
 * that directory instead of /usr/bin.  The stubs log a path argument (/..., ./...,
 * ../...) resolved (realpath -m), so the path-* spellings, which name the same
 * file another way, show the same argv, and what a file on their standard input
 * holds, so a redirection lost on the way shows.  Commands are written to files and run as
 * scripts, never pasted into a shell. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli/mutate.h"
#include "slurp.h"
#include "common/alloc.h"

static char root[256], bindir[300], workdir[300], homedir[300], logpath[300], script[300], outpath[300],
    errpath[300];
static int failures;

static const char *const stubs[] = {
    "rm", "cat", "git", "curl", "chmod", "chown", "cp", "mv", "grep", "rsync", "sort", "wget", "sed", "mkdir",
    "ln", "shred", "docker", "pip", "tar", "wc", "head", "dd", "kubectl", NULL
};
static const char *const wrappers[] = { "env", "nice", "timeout", "xargs", "sh", "bash", NULL };

/* Sample commands: only stubbed programs, the wrappers and shell builtins. */
static const char *const samples[] = {
    "rm -rf dir1 dir2",
    "rm -r -f -v a --one-file-system",
    "rm --recursive --force --no-preserve-root x",
    "git push --force origin main",
    "git clean -fdx",
    "git commit -a -m 'a message' --file=msg.txt",
    "git reset --hard HEAD~1",
    "curl -sSL -o out.bin https://example.com/x",
    "curl --output out.bin -H 'X-A: b' https://example.com",
    "grep -rn --max-count=3 'a b' src >hits.txt",
    "grep -e -x -i file",
    "grep -vc x notes.txt | wc -l",
    "cat a.txt | grep -v x | sort -rn >sorted.txt",
    "sed -i.bak -n 's/a/b/' f.txt",
    "sed -n -i s/a/b/ f.txt",
    "cp -a --target-directory=dst src1 src2",
    "cp -t dst -r a",
    "chmod -R -v 755 d",
    "rsync -avz --rsh=ssh a b:",
    "mkdir -pm 700 d",
    "ln -sf target link 2>err.txt",
    "A=1 rm -f x",
    "rm 'a b' \"c d\" $'e\\tf' g\\ h",
    "cat <in.txt >out.txt",
    ">first.txt cat a",
    "cat a >>app.txt b",
    "echo x && rm -rf y || cat z",
    "rm -rf -- -x",
    "docker rm -f -v c1",
    "pip install -r req.txt -U",
    "shred -u -z -n 3 secret",
    "sort -o out.txt -k 2 in.txt",
    "sort -o <in.txt out.txt",
    "tar -czf a.tgz d; rm -rf d",
    "(rm -rf x)",
    "{ git status; } >st.txt",
    "cat ~/notes.txt",
    "cat <<< 'here string'",
    "cat <<EOF\nbody line\nEOF",
    "! rm -f nothing",
    "for f in a b; do rm -f \"$f\"; done",
    "if git diff --quiet; then rm -rf build; fi",
    "wget -qO- https://example.com | tar -x -f -",
    "dd if=/dev/zero of=img bs=1 count=1",
    "rm -rf x >log.txt 2>&1",
    /* path operands, for the path-* spellings (path-glob: of paths that exist) */
    "cat /etc/hostname /etc/passwd",
    "rm -rf /tmp/sgm-absent/a/b ./build",
    "chmod -R 755 /usr/share/doc",
    "cp ./in.txt ../sgm-out.txt",
    "cat ~/notes.txt >/dev/null",
    "cat '#not-a-comment' 'it''s' \"q\\\"uote\" '$HOME' \"!bang\"",
    "rm -rf *.o",
    "rm -- -rf",
    "git -C repo push -f",
    /* programs known only by declarations (stub_optkind): getopt's head, pflag's kubectl */
    "head -n 5 -q in.txt",
    "head --lines 3 -c5 in.txt",
    "head -qn 2 in.txt",
    "kubectl delete pod web -n prod",
    "kubectl -n prod delete pod web --force",
    "kubectl --namespace=prod scale deploy web -A",
    "kubectl get pods -nprod -o wide",
    "kubectl delete pod web -n=prod",
    "kubectl apply -f x.yaml --namespace staging -- extra -n no",
    "kubectl -s https://h.example -n prod delete pod a b >out.txt",
    "kubectl logs web -c 'my app' --namespace 'a b'",
    NULL
};

static int write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        return -1;
    return chmod(path, mode);
}

static const char *real_path(const char *name)
{
    static char buf[300];
    const char *dirs[] = { "/usr/bin", "/bin", "/usr/local/bin" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(buf, sizeof buf, "%s/%s", dirs[i], name);
        if (access(buf, X_OK) == 0)
            return buf;
    }
    return NULL;
}

/* a stub logs its name and argv, one line written at once (pipeline stages run
 * concurrently), then prints a line so redirections have something to write.
 * Programs whose options the transformations respell log their argv as GNU getopt
 * reads it, with long options mapped to short ones: `rm -rf x`, `rm -r --force x`
 * and `rm --recursiv -f x` all log `rm <-r> <-f> <--> <x>`.  kubectl (P=1) logs
 * its argv as Go's pflag reads it: -n=prod is -n prod, options anywhere before
 * "--", no abbreviations.  head and kubectl are no program of cli/mutate.c's own
 * tables: their options reach it only as declarations (stub_optkind). */
static const char *const stub =
    "#!/bin/bash\n"
    "n=${0##*/}; k=$n; S=; L=; M=; P=\n"
    "case $n in git|docker|pip) k=\"$n $1\";; esac\n"
    "case $k in\n"
    "rm) S=rRfidvI; L=recursive,force,interactive::,one-file-system,no-preserve-root,preserve-root::,dir,verbose,help,version;"
    " M='-R=-r --recursive=-r --force=-f --interactive=-i --dir=-d --verbose=-v';;\n"
    "cp) S=rRfivanlsLPxt:S:; L=recursive,force,interactive,verbose,archive,no-clobber,link,symbolic-link,dereference,"
    "no-dereference,one-file-system,target-directory:,suffix:;"
    " M='-R=-r --recursive=-r --force=-f --interactive=-i --verbose=-v --archive=-a --no-clobber=-n --link=-l"
    " --symbolic-link=-s --dereference=-L --no-dereference=-P --one-file-system=-x --target-directory=-t --suffix=-S';;\n"
    "grep) S=rRinlLvcwxEFqshHoe:f:m:A:B:C:; L=recursive,dereference-recursive,ignore-case,line-number,files-with-matches,"
    "files-without-match,invert-match,count,word-regexp,line-regexp,extended-regexp,fixed-strings,quiet,no-messages,"
    "no-filename,with-filename,only-matching,regexp:,file:,max-count:,after-context:,before-context:,context:;"
    " M='--recursive=-r --dereference-recursive=-R --ignore-case=-i --line-number=-n --files-with-matches=-l"
    " --files-without-match=-L --invert-match=-v --count=-c --word-regexp=-w --line-regexp=-x --extended-regexp=-E"
    " --fixed-strings=-F --quiet=-q --no-messages=-s --no-filename=-h --with-filename=-H --only-matching=-o"
    " --regexp=-e --file=-f --max-count=-m --after-context=-A --before-context=-B --context=-C';;\n"
    "curl) S=sSLkfOviIo:X:d:H:u:T:F:x:A:e:b:c:K:; L=silent,show-error,location,insecure,fail,remote-name,verbose,include,"
    "head,output:,request:,data:,header:,user:,upload-file:,form:,proxy:,user-agent:,referer:,cookie:,cookie-jar:,config:;"
    " M='--silent=-s --show-error=-S --location=-L --insecure=-k --fail=-f --remote-name=-O --verbose=-v --include=-i"
    " --head=-I --output=-o --request=-X --data=-d --header=-H --user=-u --upload-file=-T --form=-F --proxy=-x"
    " --user-agent=-A --referer=-e --cookie=-b --cookie-jar=-c --config=-K';;\n"
    "wget) S=qvcNrkpO:o:P:U:t:T:i:; L=quiet,verbose,continue,timestamping,recursive,convert-links,page-requisites,"
    "output-document:,output-file:,directory-prefix:,user-agent:,tries:,timeout:,input-file:;"
    " M='--quiet=-q --verbose=-v --continue=-c --timestamping=-N --recursive=-r --convert-links=-k --page-requisites=-p"
    " --output-document=-O --output-file=-o --directory-prefix=-P --user-agent=-U --tries=-t --timeout=-T"
    " --input-file=-i';;\n"
    "'git push') S=fundvq; L=force,set-upstream,dry-run,delete,verbose,quiet,mirror,all,tags;"
    " M='--force=-f --set-upstream=-u --dry-run=-n --delete=-d --verbose=-v --quiet=-q';;\n"
    "'git clean') S=fdxXnqe:; L=force,dry-run,quiet,exclude:; M='--force=-f --dry-run=-n --quiet=-q --exclude=-e';;\n"
    "'git reset') S=q; L=quiet,hard,soft,mixed,merge,keep; M='--quiet=-q';;\n"
    "'git commit') S=anqvsm:F:; L=all,no-verify,quiet,verbose,signoff,message:,file:;"
    " M='--all=-a --no-verify=-n --quiet=-q --verbose=-v --signoff=-s --message=-m --file=-F';;\n"
    "chmod) S=Rvfc; L=recursive,verbose,silent,changes; M='--recursive=-R --verbose=-v --silent=-f --changes=-c';;\n"
    "rsync) S=avzrnuhqlptgoHxPe:; L=archive,verbose,compress,recursive,dry-run,update,human-readable,quiet,links,perms,"
    "times,group,owner,hard-links,one-file-system,delete,remove-source-files,rsh:;"
    " M='--archive=-a --verbose=-v --compress=-z --recursive=-r --dry-run=-n --update=-u --human-readable=-h"
    " --quiet=-q --links=-l --perms=-p --times=-t --group=-g --owner=-o --hard-links=-H --one-file-system=-x"
    " --rsh=-e';;\n"
    "sort) S=rnufbhVsRMo:k:t:T:S:; L=reverse,numeric-sort,unique,ignore-case,ignore-leading-blanks,human-numeric-sort,"
    "version-sort,stable,output:,key:,field-separator:,temporary-directory:;"
    " M='--reverse=-r --numeric-sort=-n --unique=-u --ignore-case=-f --ignore-leading-blanks=-b"
    " --human-numeric-sort=-h --version-sort=-V --stable=-s --output=-o --key=-k --field-separator=-t"
    " --temporary-directory=-T';;\n"
    "sed) S=nErszui::e:f:l:; L=quiet,regexp-extended,separate,null-data,unbuffered,in-place::,expression:,file:,"
    "line-length:; M='-r=-E --quiet=-n --regexp-extended=-E --separate=-s --null-data=-z --unbuffered=-u"
    " --in-place=-i --expression=-e --file=-f';;\n"
    "mkdir) S=pvm:; L=parents,verbose,mode:; M='--parents=-p --verbose=-v --mode=-m';;\n"
    "ln) S=sfvnrTt:; L=symbolic,force,verbose,no-dereference,relative,no-target-directory,target-directory:;"
    " M='--symbolic=-s --force=-f --verbose=-v --no-dereference=-n --relative=-r --no-target-directory=-T"
    " --target-directory=-t';;\n"
    "shred) S=fuzvn:; L=force,remove,zero,verbose,iterations:;"
    " M='--force=-f --remove=-u --zero=-z --verbose=-v --iterations=-n';;\n"
    "'docker rm') S=fvl; L=force,volumes,link; M='--force=-f --volumes=-v --link=-l';;\n"
    "'pip install') S=Uqvr:e:t:; L=upgrade,quiet,verbose,requirement:,editable:,target:;"
    " M='--upgrade=-U --quiet=-q --verbose=-v --requirement=-r --editable=-e --target=-t';;\n"
    "head) S=n:c:qvz; L=lines:,bytes:,quiet,silent,verbose,zero-terminated;"
    " M='--lines=-n --bytes=-c --quiet=-q --silent=-q --verbose=-v --zero-terminated=-z';;\n"
    "kubectl) P=1; S=n:s:f:o:c:Aiq; L=namespace:,server:,filename:,output:,container:,all-namespaces,force,all;"
    " M='--namespace=-n --server=-s --filename=-f --output=-o --container=-c --all-namespaces=-A';;\n"
    "esac\n"
    "if [ -n \"$P\" ]; then\n"
    "  o=(); a=()\n"
    "  while [ $# -gt 0 ]; do\n"
    "    x=$1; shift\n"
    "    case $x in\n"
    "    --) a+=(\"$@\"); break;;\n"
    "    --*=*) o+=(\"${x%%=*}\" \"${x#*=}\");;\n"
    "    --?*) if [[ \",$L,\" == *\",${x#--}:,\"* ]]; then o+=(\"$x\" \"$1\"); shift; else o+=(\"$x\"); fi;;\n"
    "    -?*) y=${x#-}\n"
    "      while [ -n \"$y\" ]; do\n"
    "        c=${y:0:1}; y=${y:1}\n"
    "        if [[ \"$S\" == *\"$c:\"* ]]; then\n"
    "          if [ -n \"$y\" ]; then v=${y#=}; else v=$1; shift; fi\n"
    "          o+=(\"-$c\" \"$v\"); y=\n"
    "        else o+=(\"-$c\"); fi\n"
    "      done;;\n"
    "    *) a+=(\"$x\");;\n"
    "    esac\n"
    "  done\n"
    "  set -- \"${o[@]}\" -- \"${a[@]}\"\n"
    "elif [ -n \"$S\" ]; then\n"
    "  [ \"$k\" != \"$n\" ] && shift\n"
    "  norm=$(/usr/bin/getopt -q -o \"$S\" -l \"$L\" -- \"$@\") || norm=GETOPT-ERROR\n"
    "  eval \"set -- $norm\"\n"
    "  [ \"$k\" != \"$n\" ] && set -- \"${k#* }\" \"$@\"\n"
    "fi\n"
    "line=$n\n"
    "for a in \"$@\"; do for p in $M; do [ \"$a\" = \"${p%%=*}\" ] && a=${p#*=}; done;"
    " case $a in /*|./*|../*) a=$(/usr/bin/realpath -m -- \"$a\");; esac;"
    /* a URL as the place it names: scheme and host in lower case, no trailing dot,
     * no user, no port the scheme has anyway (the url transformation's meaning) */
    " if [[ $a =~ ^([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(.*)$ ]]; then"
    " us=${BASH_REMATCH[1],,}; uh=${BASH_REMATCH[2]##*@}; ur=${BASH_REMATCH[3]}; uh=${uh,,}; up=;"
    " if [[ $uh == *:* ]]; then up=${uh##*:}; uh=${uh%:*}; fi; uh=${uh%.};"
    " case $us:$up in https:443|http:80) up=;; esac; a=\"$us://$uh${up:+:$up}$ur\"; fi;"
    " line+=\" <$a>\"; done\n"
    "[ -f /dev/stdin ] && line+=\" stdin:$(/usr/bin/head -c 64 | /usr/bin/tr -d '\\n')\"\n"
    "printf '%s\\n' \"$line\" >>\"$SGM_LOG\"\n"
    "printf '%s-out\\n' \"$n\"\n";

static int setup(void)
{
    snprintf(root, sizeof root, "/tmp/sgmut.XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(bindir, sizeof bindir, "%s/bin", root);
    snprintf(workdir, sizeof workdir, "%s/work", root);
    snprintf(homedir, sizeof homedir, "%s/home", root);
    snprintf(logpath, sizeof logpath, "%s/log", root);
    snprintf(script, sizeof script, "%s/cmd.sh", root);
    snprintf(outpath, sizeof outpath, "%s/out", root);
    snprintf(errpath, sizeof errpath, "%s/err", root);
    if (mkdir(bindir, 0700) || mkdir(workdir, 0700) || mkdir(homedir, 0700))
        return -1;
    char p[400];
    for (size_t i = 0; stubs[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", bindir, stubs[i]);
        if (write_file(p, stub, 0755))
            return -1;
    }
    for (size_t i = 0; wrappers[i]; i++) {
        const char *r = real_path(wrappers[i]);
        snprintf(p, sizeof p, "%s/%s", bindir, wrappers[i]);
        if (!r || symlink(r, p))
            return -1;
    }
    return 0;
}

static void clear_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[700];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            clear_dir(p);
            rmdir(p);
        } else {
            unlink(p);
        }
    }
    closedir(d);
}

/* A file's text; "" when it does not exist (a log nobody wrote). */
static char *slurp(const char *path)
{
    char *s = sg_slurp(path, NULL);
    if (!s)
        s = strdup("");
    if (!s)
        exit(2);
    return s;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lines of s in sorted order (pipeline stages run concurrently). */
static void sort_lines(char *s)
{
    size_t n = 0;
    for (char *p = s; *p; p++)
        n += *p == '\n';
    char **v = calloc(n + 1, sizeof *v), *copy = strdup(s);
    if (!v || !copy)
        exit(2);
    size_t k = 0;
    for (char *tok = strtok(copy, "\n"); tok && k <= n; tok = strtok(NULL, "\n"))
        v[k++] = tok;
    qsort(v, k, sizeof *v, cmp_str);
    s[0] = '\0';
    for (size_t i = 0; i < k; i++) {
        strcat(s, v[i]);
        strcat(s, "\n");
    }
    free(v);
    free(copy);
}

/* Run bash on the script in the work dir; 0 on exit status < 126 (the command ran). */
static int run_bash(int syntax_only, int *status)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        FILE *o = freopen(outpath, "w", stdout), *e = freopen(errpath, "w", stderr);
        if (!o || !e || chdir(workdir))
            _exit(127);
        alarm(20);
        char envpath[400], envlog[400], envhome[400];
        snprintf(envpath, sizeof envpath, "PATH=%s", bindir);
        snprintf(envlog, sizeof envlog, "SGM_LOG=%s", logpath);
        snprintf(envhome, sizeof envhome, "HOME=%s", homedir);
        char *envp[] = { envpath, envlog, envhome, (char *)"LC_ALL=C", NULL };
        if (syntax_only)
            execle("/bin/bash", "bash", "--norc", "--noprofile", "-n", script, (char *)NULL, envp);
        else
            execle("/bin/bash", "bash", "--norc", "--noprofile", script, (char *)NULL, envp);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    *status = st;
    return 0;
}

/* What running cmd did: log, files in the work dir, stdout; "" and *bad on a syntax error. */
static char *effect(const char *cmd, int sorted, int *syntax_ok, char **err)
{
    if (write_file(script, cmd, 0600)) {
        fprintf(stderr, "cannot write %s\n", script);
        exit(2);
    }
    int st;
    *syntax_ok = run_bash(1, &st) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    clear_dir(workdir);
    unlink(logpath);
    char fx[400];
    snprintf(fx, sizeof fx, "%s/in.txt", workdir);
    if (write_file(fx, "input\n", 0600))
        exit(2);
    if (run_bash(0, &st) < 0)
        exit(2);
    char *log = slurp(logpath), *out = slurp(outpath);
    *err = slurp(errpath);
    if (sorted) {
        sort_lines(log);
        sort_lines(out);
    }
    size_t cap = strlen(log) + strlen(out) + 64;
    /* files of the work dir, by name */
    DIR *d = opendir(workdir);
    char **names = NULL;
    size_t nn = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        names = realloc(names, (nn + 1) * sizeof *names);
        names[nn++] = strdup(e->d_name);
    }
    if (d)
        closedir(d);
    if (nn)
        qsort(names, nn, sizeof *names, cmp_str);
    char **contents = calloc(nn + 1, sizeof *contents);
    for (size_t i = 0; i < nn; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/%s", workdir, names[i]);
        contents[i] = slurp(p);
        if (sorted)
            sort_lines(contents[i]);
        cap += strlen(names[i]) + strlen(contents[i]) + 16;
    }
    char *s = malloc(cap);
    if (!s)
        exit(2);
    snprintf(s, cap, "log:\n%sstdout:\n%s", log, out);
    for (size_t i = 0; i < nn; i++) {
        strcat(s, "file ");
        strcat(s, names[i]);
        strcat(s, ":\n");
        strcat(s, contents[i]);
        free(names[i]);
        free(contents[i]);
    }
    free(names);
    free(contents);
    free(log);
    free(out);
    return s;
}

static int err_bad(const char *err)
{
    return strstr(err, "not found") || strstr(err, "syntax error") || strstr(err, "No such file")
           || strstr(err, "unexpected") || strstr(err, "invalid option") || strstr(err, "unrecognized");
}

/* The long options the stubs' getopt reads (their L= lists), "--"-prefixed and sorted:
 * what a table's longopts list is to `shellgate fuzz`, for long-abbrev's table path.
 * Every abbreviation unique among all of them is unique for each program. */
static char *stub_long[256];
static size_t nstub_long;

static void collect_stub_long(void)
{
    for (const char *p = strstr(stub, " L="); p; p = strstr(p + 1, " L=")) {
        const char *e = strchr(p, ';');
        for (const char *q = p + 3; q < e && nstub_long < 256;) {
            const char *c = q;
            while (c < e && *c != ',' && *c != ':')
                c++;
            char *w = malloc((size_t)(c - q) + 3);
            if (!w) {
                fprintf(stderr, "FAIL out of memory\n");
                exit(1);
            }
            memcpy(w, "--", 2);
            memcpy(w + 2, q, (size_t)(c - q));
            w[c - q + 2] = '\0';
            stub_long[nstub_long++] = w;
            while (c < e && *c != ',')
                c++;
            q = c + 1;
        }
    }
    qsort(stub_long, nstub_long, sizeof *stub_long, cmp_str);
    size_t d = 0;
    for (size_t i = 0; i < nstub_long; i++) {
        if (d && strcmp(stub_long[i], stub_long[d - 1]) == 0)
            free(stub_long[i]);
        else
            stub_long[d++] = stub_long[i];
    }
    nstub_long = d;
}

/* sgm_opts.optkind over the stubs' own option lists, as a table's declarations
 * would say it: "-x" is a value option when S= has "x:", a flag when it has x
 * alone; "--name" when L= has "name:" or "name"; an optional value ("::") is
 * neither.  Programs known by a subcommand ('git push') have no entry. */
static unsigned stub_optkind(void *ud, const char *prog, size_t plen, const char *opt, size_t olen)
{
    (void)ud;
    char key[64];
    if (plen + 3 > sizeof key)
        return 0;
    snprintf(key, sizeof key, "\n%.*s)", (int)plen, prog);
    const char *e = strstr(stub, key);
    if (!e)
        return 0;
    const char *end = strstr(e, ";;");
    if (olen == 2 && opt[0] == '-' && opt[1] != '-' && opt[1] != ':') {
        const char *sv = strstr(e, " S=");
        for (const char *c = sv ? sv + 3 : end; c < end && *c != ';'; c++) {
            if (*c != opt[1])
                continue;
            if (c[1] != ':')
                return SGM_OPT_FLAG;
            return c[2] == ':' ? 0 : SGM_OPT_VALUE;
        }
        return 0;
    }
    if (olen < 3 || memcmp(opt, "--", 2) != 0)
        return 0;
    const char *lv = strstr(e, " L=");
    for (const char *q = lv ? lv + 3 : end; q < end && *q != ';';) {
        size_t n = strcspn(q, ",;:");
        if (n == olen - 2 && memcmp(q, opt + 2, n) == 0)
            return q[n] != ':' ? SGM_OPT_FLAG : q[n + 1] == ':' ? 0 : SGM_OPT_VALUE;
        q += strcspn(q, ",;");
        if (*q == ',')
            q++;
    }
    return 0;
}

static unsigned applied[SGM__COUNT];
static unsigned checked;

/* effect's text without what the command printed (from "stdout:" up to the
 * first "file " line): for the transformations that capture a command's output
 * (sgm_keeps_output), the programs, their argv and the files must match. */
static char *without_stdout(const char *e)
{
    char *s = strdup(e);
    if (!s)
        exit(2);
    char *a = strstr(s, "stdout:\n"), *b = a ? strstr(a, "\nfile ") : NULL;
    if (a)
        memmove(a, b ? b + 1 : a + strlen(a), strlen(b ? b + 1 : a + strlen(a)) + 1);
    return s;
}

static void check_pair(const char *orig, const char *orig_effect, const char *orig_err, const char *variant,
                       const char *chain, int sorted, int keeps_output)
{
    int syn;
    char *err;
    char *eff = effect(variant, sorted, &syn, &err);
    checked++;
    char *want = keeps_output ? strdup(orig_effect) : without_stdout(orig_effect);
    char *got = keeps_output ? strdup(eff) : without_stdout(eff);
    if (!want || !got)
        exit(2);
    if (!syn) {
        fprintf(stderr, "FAIL bash -n rejects (%s):\n  original: %s\n  variant:  %s\n", chain, orig, variant);
        failures++;
    } else if (strcmp(got, want) != 0) {
        fprintf(stderr, "FAIL different effect (%s):\n  original: %s\n  variant:  %s\n--- original:\n%s--- variant:\n%s",
                chain, orig, variant, orig_effect, eff);
        failures++;
    } else if (err_bad(err) && !err_bad(orig_err)) {
        fprintf(stderr, "FAIL errors (%s):\n  original: %s\n  variant:  %s\n%s", chain, orig, variant, err);
        failures++;
    }
    free(want);
    free(got);
    free(eff);
    free(err);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (access("/bin/bash", X_OK) != 0) {
        printf("SKIP: no /bin/bash\n");
        return 0;
    }
    if (setup()) {
        fprintf(stderr, "setup failed in %s: %s\n", root, strerror(errno));
        return 1;
    }
    const char *dirs[] = { bindir };
    sgm_opts o;
    memset(&o, 0, sizeof o);
    o.bindirs = dirs;
    o.nbindirs = 1;
    for (size_t si = 0; samples[si]; si++) {
        const char *cmd = samples[si];
        int sorted = strchr(cmd, '|') != NULL, syn;
        char *err;
        char *eff = effect(cmd, sorted, &syn, &err);
        if (!syn || err_bad(err)) {
            fprintf(stderr, "FAIL the sample itself does not run cleanly: %s\n%s", cmd, err);
            failures++;
        }
        /* program-case names a program only a case-folding filesystem finds (RM for
         * rm): bash here cannot run it, so it is checked by its text: the same
         * line but for the case of a program's name and a .exe after it */
        for (uint64_t seed = 1; seed <= 4; seed++) {
            sgm_opts fo = o;
            fo.fold_case = 2;
            uint64_t rng = seed * 104729;
            char *v;
            int r = sgm_apply(SGM_PROG_CASE, cmd, strlen(cmd), &fo, &rng, &v);
            if (r < 0)
                return 1;
            if (r == 0)
                continue;
            applied[SGM_PROG_CASE]++;
            checked++;
            char *x = strdup(v), *e = x ? strstr(x, ".EXE") : NULL;
            if (x && !e)
                e = strstr(x, ".exe");
            if (e)
                memmove(e, e + 4, strlen(e + 4) + 1);
            if (!x || strcasecmp(x, cmd) != 0 || (strcmp(x, cmd) == 0 && !e)) {
                fprintf(stderr, "FAIL program-case made more than another case of a name:\n  original: %s\n  variant:  %s\n", cmd, v);
                failures++;
            }
            free(x);
            sg_free(v);
        }
        /* each transformation alone, from a few seeds */
        for (int t = 0; t < SGM__COUNT; t++) {
            if (t == SGM_PROG_CASE)
                continue;
            for (uint64_t seed = 1; seed <= 2; seed++) {
                uint64_t rng = seed * 7919 + (uint64_t)t;
                char *v;
                int r = sgm_apply((sgm_transform)t, cmd, strlen(cmd), &o, &rng, &v);
                if (r < 0) {
                    fprintf(stderr, "FAIL out of memory\n");
                    return 1;
                }
                if (r == 0)
                    continue;
                applied[t]++;
                check_pair(cmd, eff, err, v, sgm_names[t], sorted, sgm_keeps_output((sgm_transform)t));
                sg_free(v);
            }
        }
        /* chains */
        sgm_list l = { 0 };
        o.max = 16;
        if (sgm_variants(cmd, &o, 12345, &l) < 0) {
            fprintf(stderr, "FAIL out of memory\n");
            return 1;
        }
        for (size_t i = 0; i < l.n; i++) {
            if (l.v[i].nchain < 2)
                continue;
            char chain[200] = "";
            int keeps = 1;
            for (unsigned k = 0; k < l.v[i].nchain; k++) {
                strcat(chain, k ? " > " : "");
                strcat(chain, sgm_names[l.v[i].chain[k]]);
                keeps &= sgm_keeps_output((sgm_transform)l.v[i].chain[k]);
            }
            check_pair(cmd, eff, err, l.v[i].cmd, chain, sorted, keeps);
        }
        sgm_list_free(&l);
        free(eff);
        free(err);
    }
    /* the option transformations as `shellgate fuzz` runs them: long-abbrev from a
     * table's list of long options, and opt-split, opt-join and option-move from
     * its declarations of which options take a value, for any program, not only
     * the few this file's C tables know */
    collect_stub_long();
    sgm_opts to = o;
    to.max = 16;
    to.longopts = (const char *const *)stub_long;
    to.nlongopts = nstub_long;
    to.optkind = stub_optkind;
    static const sgm_transform table_ts[] = { SGM_LONG_ABBREV, SGM_OPT_SPLIT, SGM_OPT_JOIN, SGM_OPT_MOVE };
    unsigned table_applied[4] = { 0 }, decl_applied[4] = { 0 };
    /* the spellings of kubectl's -n prod that only the declarations give */
    static const char *const want_spelled[] = { "-nprod", "-n=prod", "-n prod", "--namespace prod",
                                                "--namespace=staging", "kubectl -n prod delete pod web\n",
                                                "kubectl delete pod web -n prod\n", NULL };
    unsigned seen_spelled[8] = { 0 };
    for (size_t si = 0; samples[si]; si++) {
        const char *cmd = samples[si];
        if (strstr(cmd, "git diff"))
            continue;                       /* its stub logs options as written, unread */
        int decl = strncmp(cmd, "head ", 5) == 0 || strncmp(cmd, "kubectl ", 8) == 0;
        int sorted = strchr(cmd, '|') != NULL, syn;
        char *err;
        char *eff = effect(cmd, sorted, &syn, &err);
        for (size_t ti = 0; ti < 4; ti++)
            for (uint64_t seed = 1; seed <= 8; seed++) {
                uint64_t rng = seed * 104729 + ti;
                char *v;
                int r = sgm_apply(table_ts[ti], cmd, strlen(cmd), &to, &rng, &v);
                if (r < 0) {
                    fprintf(stderr, "FAIL out of memory\n");
                    return 1;
                }
                if (r == 0)
                    continue;
                table_applied[ti]++;
                decl_applied[ti] += decl;
                char name[64];
                snprintf(name, sizeof name, "%s (table)", sgm_names[table_ts[ti]]);
                check_pair(cmd, eff, err, v, name, sorted, 1);
                char nl[600];
                snprintf(nl, sizeof nl, "%s\n", v);
                for (size_t k = 0; want_spelled[k]; k++)
                    seen_spelled[k] += strncmp(cmd, "kubectl ", 8) == 0 && strstr(nl, want_spelled[k])
                                       && !strstr(cmd, want_spelled[k]);
                sg_free(v);
            }
        /* and chained with everything else, for the programs known by declarations */
        sgm_list l = { 0 };
        if (decl && sgm_variants(cmd, &to, 777, &l) < 0) {
            fprintf(stderr, "FAIL out of memory\n");
            return 1;
        }
        for (size_t i = 0; i < l.n; i++) {
            char chain[200] = "";
            int keeps = 1;
            for (unsigned k = 0; k < l.v[i].nchain; k++) {
                strcat(chain, k ? " > " : "");
                strcat(chain, sgm_names[l.v[i].chain[k]]);
                keeps &= sgm_keeps_output((sgm_transform)l.v[i].chain[k]);
            }
            strcat(chain, " (table)");
            check_pair(cmd, eff, err, l.v[i].cmd, chain, sorted, keeps);
        }
        sgm_list_free(&l);
        free(eff);
        free(err);
    }
    if (table_applied[0] < 20) {
        fprintf(stderr, "FAIL long-abbrev from a table's options applied only %u times\n", table_applied[0]);
        failures++;
    }
    for (size_t ti = 1; ti < 4; ti++)
        if (decl_applied[ti] < 8) {
            fprintf(stderr, "FAIL %s from declarations applied only %u times to head and kubectl\n",
                    sgm_names[table_ts[ti]], decl_applied[ti]);
            failures++;
        }
    for (size_t k = 0; want_spelled[k]; k++)
        if (!seen_spelled[k]) {
            fprintf(stderr, "FAIL no variant of a kubectl sample spells %s from its declarations\n",
                    want_spelled[k]);
            failures++;
        }
    for (size_t i = 0; i < nstub_long; i++)
        free(stub_long[i]);
    for (int t = 0; t < SGM__COUNT; t++) {
        if (!applied[t]) {
            fprintf(stderr, "FAIL transformation %s never applied to a sample\n", sgm_names[t]);
            failures++;
        }
    }
    printf("%u variants run against their originals, %d failures\n", checked, failures);
    clear_dir(root);
    rmdir(root);
    return failures ? 1 : 0;
}
