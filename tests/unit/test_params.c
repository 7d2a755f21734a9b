/* A row's params: canonical key=value pairs sorted by key. */
#include "check.h"
#include "internal.h"

#include <string.h>

int main(void)
{
    struct mb_row row;
    mb_row_init(&row, "bcast", "library");
    CHECK(row.params[0] == 0); /* empty where none */
    mb_param(&row, "timing", "osu");
    mb_param(&row, "root", "%d", 3);
    mb_param(&row, "segment", "%zu", (size_t)8192);
    CHECK(!strcmp(row.params, "root=3;segment=8192;timing=osu"));
    mb_param(&row, "root", "rotate"); /* a key given again is replaced, in place */
    CHECK(!strcmp(row.params, "root=rotate;segment=8192;timing=osu"));
    mb_param(&row, "a", "1"); /* first, last and a prefix of another key */
    mb_param(&row, "zz", "2");
    mb_param(&row, "seg", "x");
    CHECK(!strcmp(row.params, "a=1;root=rotate;seg=x;segment=8192;timing=osu;zz=2"));

    /* the order of the calls does not matter: the string is canonical */
    struct mb_row other;
    mb_row_init(&other, "bcast", "library");
    const char *keys[] = {"zz", "timing", "seg", "a", "segment", "root"};
    const char *vals[] = {"2", "osu", "x", "1", "8192", "rotate"};
    for (int i = 0; i < 6; i++) mb_param(&other, keys[i], "%s", vals[i]);
    CHECK(!strcmp(row.params, other.params));

    /* read back: a key is matched whole, never as a prefix of another key or a value */
    size_t n = 0;
    const char *v = mb_param_get(row.params, "seg", &n);
    CHECK(v && n == 1 && !strncmp(v, "x", n));
    v = mb_param_get(row.params, "segment", &n);
    CHECK(v && n == 4 && !strncmp(v, "8192", n));
    CHECK(mb_param_get(row.params, "zz", NULL) && !mb_param_get(row.params, "z", NULL));
    CHECK(!mb_param_get(row.params, "rotate", NULL) && !mb_param_get("", "a", NULL));
    CHECK(mb_param_is(row.params, "root", "rotate") && mb_param_is(row.params, "a", "1"));
    CHECK(!mb_param_is(row.params, "root", "rot") && !mb_param_is(row.params, "root", "rotates"));
    CHECK(!mb_param_is(row.params, "seg", "8192") && mb_param_is("k=", "k", ""));

    return CHECK_DONE();
}
