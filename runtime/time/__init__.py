"""Time (private): the loops that pace a component's cycles, in real time and in virtual time
(kernel clock, stepping), and the tracing of those cycles."""
