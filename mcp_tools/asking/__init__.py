"""Asking the client mid-call (elicitation, sampling, roots): the request state a reply resumes
and the mailbox that carries it."""
