"""Online mode: the live PyTorch index (and its mirrors) as a source of which releases and variants exist.

``urls`` (which index bases are accepted, page URLs), ``pages`` (simple-index pages and wheel names), ``client``
(fetching under the transport rules), ``cache`` (pages and derived results on disk), ``facts`` (what the index
offers a target), ``merge`` (those facts in the matrix), ``learn`` (the entry point, ``online_matrix``) and
``hashes`` (``--hashes``).
"""
