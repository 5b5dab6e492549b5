"""The graph ``langgraph dev`` serves in tests: the real workflow over the scripted fakes.

No checkpointer here: the Agent Server brings its own (a compiled-in one makes it exit).
"""

from tests.serving_app import build_test_graph

graph = build_test_graph()
