"""Graphs of operators: DirectML's graph description compiled into the fewest launches
(``graph``), and ``cd.fuse``, which traces a function of the array functions into one."""
