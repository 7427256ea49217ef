"""The tracer component: cycle traces in the Chrome trace format."""
