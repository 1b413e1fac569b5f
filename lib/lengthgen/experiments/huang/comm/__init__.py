"""The communication chapter (Huang et al. 2025, Theorem 12 and Corollary 13): the measured
message length of the protocol (`comm_protocol_bits`).
"""
