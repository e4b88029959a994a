# Fails unless the Markdown file README quotes every file in SNIPPETS verbatim (run by the
# readme_snippets and docs_snippets tests), so the code a reader copies is the code that compiles.
#   cmake -DREADME=README.md -DSNIPPETS="a.cpp;b.cpp" -P check_readme_snippets.cmake
file(READ "${README}" readme)
set(missing "")
foreach(snippet IN LISTS SNIPPETS)
  file(READ "${snippet}" code)
  string(FIND "${readme}" "${code}" at)
  if(at EQUAL -1)
    list(APPEND missing "${snippet}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "${README} does not quote these files verbatim (update it): ${missing}")
endif()
list(LENGTH SNIPPETS n)
message(STATUS "${README} quotes all ${n} example files verbatim")
