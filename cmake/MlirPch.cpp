// The translation unit that owns the precompiled header (cmake/Pch.cmake):
// a library of its own, with no dependencies, so that the header is
// precompiled first, while the runtime compiles, instead of after the
// dialect's TableGen steps. It defines nothing.
