"""The ipywidgets of the notebook: live panels, question and authorization forms, and their saved snapshots."""
