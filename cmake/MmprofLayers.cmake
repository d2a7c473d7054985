# The layers of docs/architecture.md as CMake targets: one static library per folder of src/,
# linking only the layers below it. A layer's sources see, through their include path, only the
# headers of the layers they declare (and what those declare in turn): each layer gets a view
# folder build/layers/<layer>/ holding a symbolic link per visible layer, so a wrong-way include
# ("loader/..." from env/) fails to compile instead of quietly working.
#
#   mmprof_layer(<name> SOURCES <files...> [LAYERS <lower layers...>]
#                [LINK <public libraries...>] [PRIVATE_LINK <private libraries...>])
#
# defines target mmprof_<name> (exported as mmprof::<name>) from src/<name>/<files>. The views are
# PRIVATE include folders. A layer's public API is in src/<name>/include/mmprof/ ("mmprof/x.hpp"),
# a PUBLIC include folder: seen by the layers above it, by users of the installed package (where
# cmake/MmprofInstall.cmake gathers every layer's into include/mmprof/), and by no layer below.

set(MMPROF_LAYER_VIEWS ${CMAKE_BINARY_DIR}/layers)
set_property(GLOBAL PROPERTY MMPROF_LAYERS "")

# Makes the view folder `dir` with one link per layer in `layers`.
function(mmprof_make_view dir layers)
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
  foreach(layer IN LISTS layers)
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${layer} ${dir}/${layer} SYMBOLIC)
  endforeach()
endfunction()

function(mmprof_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 L "" "" "SOURCES;LAYERS;LINK;PRIVATE_LINK")
  set(visible ${name})
  set(lower_targets)
  foreach(dep IN LISTS L_LAYERS)
    if(NOT TARGET mmprof_${dep})
      message(FATAL_ERROR "layer '${name}' uses '${dep}', which is not a layer defined below it "
                          "(src/CMakeLists.txt adds the layers bottom up)")
    endif()
    get_property(dep_visible GLOBAL PROPERTY MMPROF_LAYER_VISIBLE_${dep})
    list(APPEND visible ${dep_visible})
    list(APPEND lower_targets mmprof_${dep})
  endforeach()
  list(REMOVE_DUPLICATES visible)
  set_property(GLOBAL PROPERTY MMPROF_LAYER_VISIBLE_${name} ${visible})
  set_property(GLOBAL APPEND PROPERTY MMPROF_LAYERS ${name})
  mmprof_make_view(${MMPROF_LAYER_VIEWS}/${name} "${visible}")

  list(TRANSFORM L_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/ REGEX "^[^/$]")
  add_library(mmprof_${name} STATIC ${L_SOURCES})
  add_library(mmprof::${name} ALIAS mmprof_${name})
  set_target_properties(mmprof_${name} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(mmprof_${name}
    PRIVATE ${MMPROF_LAYER_VIEWS}/${name}
    PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # A layer's public headers (src/<layer>/include/mmprof/) reach the layers that link it, and no
  # other: a lower layer including one does not compile.
  if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include)
    target_include_directories(mmprof_${name}
      PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>)
    set_property(GLOBAL APPEND PROPERTY MMPROF_PUBLIC_HEADER_DIRS
                 ${CMAKE_CURRENT_SOURCE_DIR}/include/mmprof)
  endif()
  # The public headers are C++20, for users of the installed package too.
  target_compile_features(mmprof_${name} PUBLIC cxx_std_20)
  # mmprof_warnings only while building mmprof: a static library's PRIVATE links still reach its
  # exported link interface ($<LINK_ONLY:...>), and the warning flags are no concern of its users.
  target_link_libraries(mmprof_${name} PUBLIC ${lower_targets} ${L_LINK}
                                       PRIVATE $<BUILD_INTERFACE:mmprof_warnings> ${L_PRIVATE_LINK})
endfunction()

# Gives `target` (a test, benchmark or tool outside src/) the view of every layer.
function(mmprof_see_all_layers target)
  get_property(layers GLOBAL PROPERTY MMPROF_LAYERS)
  get_property(made GLOBAL PROPERTY MMPROF_ALL_VIEW_MADE)
  if(NOT made)
    mmprof_make_view(${MMPROF_LAYER_VIEWS}/all "${layers}")
    set_property(GLOBAL PROPERTY MMPROF_ALL_VIEW_MADE TRUE)
  endif()
  target_include_directories(${target} PRIVATE ${MMPROF_LAYER_VIEWS}/all)
endfunction()
