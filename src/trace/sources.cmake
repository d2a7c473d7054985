# Sources of src/trace (paths relative to src/).
list(APPEND MMPROF_SOURCES
  trace/trace_arena.cpp
  trace/trace_record.cpp
  trace/trace_session.cpp
  trace/trace_writer.cpp
  trace/tracer.cpp
)
