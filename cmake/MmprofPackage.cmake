# CPack: `cpack -G DEB` in a build folder (`make deb` for the release build) makes a Debian package
# of what the install() rules of MmprofInstall.cmake put under the prefix, installed under /usr.
# Its dependencies are the Debian packages of the shared libraries the binary and its plugins link
# (dpkg-shlibdeps), plus Debian's torch for the Python hook's jobs as a suggestion only: mmprof
# profiles a user's job with the user's own interpreter and torch.
set(CPACK_PACKAGE_NAME mmprof)
set(CPACK_PACKAGE_VENDOR mmprof)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "profiler and A/B tuner of image/video data pipelines for PyTorch training")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "mmprof developers <mmprof@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
# The torch plugin links Debian's libtorch, which lives outside the system's library folders
# (dpkg-shlibdeps finds it by the plugin's RUNPATH).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR})
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-torch, python3-torchvision")
include(CPack)
