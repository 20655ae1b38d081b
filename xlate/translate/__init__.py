"""translate"""
