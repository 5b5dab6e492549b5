"""Serving: the FastAPI/LangServe app, human review endpoints, metrics and the page.

Import ``grounded_rag.serving.app.create_app`` (needs the ``serve`` extra).
"""
