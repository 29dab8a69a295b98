# cmake -DOUT=header -DNAMES="a;b" -DFILES="x.js;y.css" -P embed.cmake: a C header
# holding each file's bytes as `static const char NAME[]` and `NAME_len`
# (the page's script and style, kept as real .js/.css files in view/).
set(text "/* generated from view/ by view/embed.cmake: do not edit */\n#include <stddef.h>\n")
list(LENGTH NAMES n)
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  list(GET NAMES ${i} name)
  list(GET FILES ${i} file)
  file(READ ${file} hex HEX)
  string(LENGTH "${hex}" hex_len)
  math(EXPR len "${hex_len} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
  string(APPEND text "static const char ${name}[] = {\n${bytes}0};\nstatic const size_t ${name}_len = ${len};\n")
endforeach()
file(WRITE ${OUT}.tmp "${text}")
file(RENAME ${OUT}.tmp ${OUT})
