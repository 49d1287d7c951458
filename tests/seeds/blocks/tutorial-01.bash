# Clone the repository
git clone https://github.com/your-org/pto-wsp.git
cd pto-wsp

# Install Python package
pip install -e .
