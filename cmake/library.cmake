# library.cmake: fuseproof_library(NAME src...): the static library fuseproof_<NAME> with its alias fuseproof::<NAME>,
# whose users include its headers from the source root ("audit/...", "kernels/...").
function(fuseproof_library name)
  add_library(fuseproof_${name} STATIC ${ARGN})
  add_library(fuseproof::${name} ALIAS fuseproof_${name})
  target_include_directories(fuseproof_${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>)
endfunction()
